import { poissonUpperTail } from "./poisson-upper-tail.ts";
import type { DispersionPrior } from "./squeeze-dispersions.ts";
import type { ClusterCounts } from "./cluster-exact-test.ts";
import type { ArmClusters, ClusterAnalysis, ClusterWeather } from "./types.ts";

/** A cluster is bad when it failed at least 1.5 times as often as a typical cluster, beyond chance. */
const BAD_RATIO = 1.5;
const BAD_LEVEL = 0.05;

/**
 * Cluster-wide weather across all tests: per cluster, failed test-iterations against what each
 * test's rate over both arms predicts for the iterations that ran there. A cluster that fails
 * many tests at once (a slow node, a flaky load balancer) stands out against the typical
 * (median) cluster; it is marked bad when it failed at least 1.5 times as often as the typical
 * cluster and the excess is significant by a Poisson tail at 0.05 Bonferroni-divided over the
 * clusters. This is descriptive: with each arm on its own clusters a bad cluster cannot be
 * subtracted from the arm it served, and the dispersion every test's p-value accounts for already
 * includes it.
 */
export function measureClusterWeather({
  layout,
  tests,
  prior,
  onePerArm,
}: {
  layout: { pr: ArmClusters; baseline: ArmClusters };
  /** Tests that failed somewhere: per-cluster counts aligned with the layout's names, and the dispersion used. */
  tests: readonly { arms: readonly [ClusterCounts, ClusterCounts]; dispersion: number }[];
  prior: DispersionPrior | null;
  onePerArm: boolean;
}): ClusterAnalysis {
  const arms = ["pr", "baseline"] as const;
  const tallies = arms.map((arm) =>
    layout[arm].names.map((cluster, index) => ({
      arm,
      cluster,
      iterations: layout[arm].ofIteration.filter((of) => of === index).length,
      failed: 0,
      expected: 0,
    })),
  );
  const dispersions: number[] = [];
  for (const test of tests) {
    let runs = 0;
    let failed = 0;
    for (const arm of test.arms) {
      for (const n of arm.runs) runs += n;
      for (const f of arm.failed) failed += f;
    }
    dispersions.push(test.dispersion);
    const rate = runs > 0 ? failed / runs : 0;
    test.arms.forEach((arm, a) => {
      const tally = tallies[a]!;
      arm.runs.forEach((n, k) => {
        tally[k]!.failed += arm.failed[k]!;
        tally[k]!.expected += n * rate;
      });
    });
  }
  const counts = { pr: layout.pr.names.length, baseline: layout.baseline.names.length };
  const tally = tallies.flat();
  const level = BAD_LEVEL / Math.max(1, tally.length);
  const entries = tally.map((entry) => ({
    ...entry,
    ratio: entry.expected > 0 ? entry.failed / entry.expected : 1,
  }));
  const ratios = entries.map((entry) => entry.ratio).sort((a, b) => a - b);
  // The median cluster, but never below half the average (1 by construction): when most clusters
  // saw no failure at all, a cluster is not bad for having a few.
  const typical = Math.max(0.5, ratios.length > 0 ? ratios[Math.floor((ratios.length - 1) / 2)]! : 1);
  const weather: ClusterWeather[] = entries.map((entry) => {
    const typicalFailures = entry.expected * typical;
    const bad =
      entries.length > 2 &&
      entry.failed >= BAD_RATIO * typicalFailures &&
      poissonUpperTail({ k: entry.failed, mean: typicalFailures }) <= level;
    return { ...entry, bad };
  });
  dispersions.sort((a, b) => a - b);
  return {
    counts,
    weather,
    prior: prior ? { phi: prior.phi, df: prior.df } : null,
    typicalDispersion: dispersions.length > 0 ? dispersions[Math.floor(dispersions.length / 2)]! : 1,
    onePerArm,
  };
}
