import type { PayloadCounts, TestCounts } from "../../src/analysis/payload-counts.ts";

export interface PayloadHistoryOptions {
  random: () => number;
  tests: number;
  payloads: number;
  /** Each payload runs on this many clusters (new ones every payload) … */
  clustersPerPayload: number;
  /** … this many iterations each. */
  iterationsPerCluster: number;
  /** Chance that a cluster is bad (for many tests at once). */
  badClusterShare?: number;
  /** Chance that a bad cluster hurts a given test. */
  badTestShare?: number;
  /** How much a bad cluster multiplies a hurt test's odds of failing. */
  badOdds?: number;
  /** Standard deviation of every test's failure log-odds from cluster to cluster. */
  clusterSpread?: number;
  /** Tests (the first ones) whose failure rate rises by `plantedIncrease` from payload `plantedAt` on. */
  planted?: number;
  plantedIncrease?: number;
  plantedAt?: number;
  /** Every test's base failure rate (another arch's history of the same tests); drawn when absent. */
  bases?: readonly number[];
}

const logit = (p: number) => Math.log(p / (1 - p));
const expit = (x: number) => 1 / (1 + Math.exp(-x));

/** Standard normal draw (Box–Muller). */
export function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Base failure rates as a real suite has them: mostly solid, some flaky, a few very flaky. */
export function baseRate(random: () => number): number {
  const draw = random();
  return draw < 0.5 ? 0.002 : draw < 0.75 ? 0.02 : draw < 0.9 ? 0.08 : 0.25;
}

export const testName = (i: number) => `[sig-network] simulated test ${i}`;

/** One payload's counts of one test on its clusters, given its failure rate before cluster weather. */
export function payloadCounts(
  random: () => number,
  rate: (cluster: number) => number,
  clusters: number,
  iterations: number,
): TestCounts {
  let failed = 0;
  for (let c = 0; c < clusters; c++) {
    const p = rate(c);
    for (let i = 0; i < iterations; i++) if (random() < p) failed++;
  }
  // Half of the failed iterations passed on a retry: flakes count as failed all the same.
  let flakes = 0;
  for (let i = 0; i < failed; i++) if (random() < 0.5) flakes++;
  return { executions: clusters * iterations, failures: failed - flakes, flakes, clusters };
}

/**
 * A stream's history: every payload runs on clusters of its own, every test's failure rate varies
 * from cluster to cluster (log-odds spread `clusterSpread`), and some clusters are bad for many
 * tests at once. With no planted tests no test's rate ever changes: every first bad payload found
 * is a false alarm.
 */
export function simulatePayloadHistory(options: PayloadHistoryOptions): PayloadCounts[] {
  const {
    random,
    tests,
    payloads,
    clustersPerPayload,
    iterationsPerCluster,
    badClusterShare = 0.25,
    badTestShare = 0.5,
    badOdds = 6,
    clusterSpread = 0.8,
    planted = 0,
    plantedIncrease = 0,
    plantedAt = payloads,
  } = options;
  const bases = options.bases ?? Array.from({ length: tests }, () => baseRate(random));
  return Array.from({ length: payloads }, (_, index) => {
    const bad = Array.from({ length: clustersPerPayload }, () => random() < badClusterShare);
    const counts: Record<string, TestCounts> = {};
    for (let t = 0; t < tests; t++) {
      const rise = t < planted && index >= plantedAt ? plantedIncrease : 0;
      counts[testName(t)] = payloadCounts(
        random,
        (c) => {
          const hurt = bad[c]! && random() < badTestShare ? Math.log(badOdds) : 0;
          return Math.min(1, expit(logit(bases[t]!) + clusterSpread * normal(random) + hurt) + rise);
        },
        clustersPerPayload,
        iterationsPerCluster,
      );
    }
    const day = String(index).padStart(3, "0");
    return {
      release: `4.19.0-0.nightly-${day}`,
      payload: `registry.example/release@sha256:${day.padStart(64, "0")}`,
      recordedAt: new Date(Date.UTC(2026, 10, 1) + index * 8 * 3600_000).toISOString(),
      runs: 1,
      tests: counts,
    };
  });
}
