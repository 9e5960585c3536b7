/**
 * What judging one run computes once and looks up after: tens of thousands of tests share a
 * handful of cluster layouts and tables. Valid for one run only — the keys leave out the run's
 * settings and its dispersion trend — so judgeTests makes one per call and hands it to each step.
 * (Fisher's test is not cached: it costs less than building its key; bench/analysis/README.md.)
 */
export interface JudgeCache {
  /** The cluster exact test of these sizes, failures and ρ. */
  clusterTest(
    key: string,
    compute: () => { pValue: number; minimum: number },
  ): { pValue: number; minimum: number };
  /** The minimum detectable failure rate of this comparison at this level. */
  detectableRate(key: string, compute: () => number | null): number | null;
  /** Cluster sizes as a key part; the array is shared when a test ran every iteration, so joined once. */
  sizesKey(sizes: readonly number[]): string;
}

export function createJudgeCache(): JudgeCache {
  const clusterTests = new Map<string, { pValue: number; minimum: number }>();
  const detectableRates = new Map<string, number | null>();
  const sizesKeys = new WeakMap<readonly number[], string>();
  return {
    clusterTest(key, compute) {
      let result = clusterTests.get(key);
      if (!result) clusterTests.set(key, (result = compute()));
      return result;
    },
    detectableRate(key, compute) {
      let rate = detectableRates.get(key);
      if (rate === undefined) detectableRates.set(key, (rate = compute()));
      return rate;
    },
    sizesKey(sizes) {
      let key = sizesKeys.get(sizes);
      if (key === undefined) sizesKeys.set(sizes, (key = sizes.join(",")));
      return key;
    },
  };
}
