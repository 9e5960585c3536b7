import { betaBinomialSumPmf } from "./beta-binomial-sum.ts";

/** One test's failed iterations, cluster by cluster, in one arm. */
export interface ClusterCounts {
  runs: readonly number[];
  failed: readonly number[];
}

export interface ClusterTestInput {
  /** Iterations per PR cluster. */
  prSizes: readonly number[];
  /** Iterations per baseline cluster. */
  baselineSizes: readonly number[];
  prFailed: number;
  baselineFailed: number;
  /** Intra-cluster correlation of failures (beta-binomial), shared by all clusters of the test. */
  rho: number;
}

function conditionalWeights({ prSizes, baselineSizes, prFailed, baselineFailed, rho }: ClusterTestInput) {
  const failed = prFailed + baselineFailed;
  const prRuns = prSizes.reduce((sum, size) => sum + size, 0);
  const baselineRuns = baselineSizes.reduce((sum, size) => sum + size, 0);
  const p = failed / (prRuns + baselineRuns);
  const pr = betaBinomialSumPmf({ sizes: prSizes, p, rho });
  const baseline = betaBinomialSumPmf({ sizes: baselineSizes, p, rho });
  const low = Math.max(0, failed - baselineRuns);
  const high = Math.min(failed, prRuns);
  return { pr, baseline, failed, low, high };
}

/**
 * One-sided test that the PR arm fails more often than the baseline when iterations come in
 * clusters: under the null both arms' clusters draw their failure probability from one
 * Beta(p, rho), so each cluster's failures are beta-binomial and an arm's total is their
 * convolution. The p-value is P(PR total ≥ observed | both totals sum to the observed failures),
 * computed exactly with p at its pooled estimate. Conditioning on the total is what makes
 * Fisher's test exact; at rho = 0 the nuisance p cancels and this is exactly the one-sided
 * Fisher exact test on iteration counts, so the cluster rule departs from the iteration rule
 * only as far as the clusters differ.
 */
export function clusterExactTestGreater(input: ClusterTestInput): number {
  return clusterExactTest(input).pValue;
}

/**
 * The p-value and, from the same distributions, the smallest p-value these margins allow (every
 * failure in the PR arm): the Tarone filter's bound.
 */
export function clusterExactTest(input: ClusterTestInput): { pValue: number; minimum: number } {
  if (input.prFailed + input.baselineFailed === 0) return { pValue: 1, minimum: 1 };
  const { pr, baseline, failed, low, high } = conditionalWeights(input);
  let tail = 0;
  let all = 0;
  let extreme = 0;
  for (let x = low; x <= high; x++) {
    const weight = pr[x]! * baseline[failed - x]!;
    all += weight;
    if (x >= input.prFailed) tail += weight;
    if (x === high) extreme = weight;
  }
  if (!(all > 0)) return { pValue: 1, minimum: 1 };
  return { pValue: Math.min(1, tail / all), minimum: Math.min(1, extreme / all) };
}
