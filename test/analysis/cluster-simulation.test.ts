import { describe, expect, it } from "vitest";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { DEFAULT_ANALYSIS_SETTINGS, type AggregatedRun } from "../../src/analysis/types.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulateClusterWeather, type ClusterWeatherOptions } from "./cluster-weather-simulation.ts";
import { judgedRegressions } from "./judged-regressions.ts";

/** The same run judged as the records would be without `cluster`: today's iteration rule. */
function withoutClusters(run: AggregatedRun): AggregatedRun {
  const { clusters: _clusters, ...plain } = run;
  return plain;
}

function simulate({
  seed,
  datasets,
  ...options
}: Omit<ClusterWeatherOptions, "random"> & { seed: string; datasets: number }) {
  const random = seededRandom(seed);
  const figures = {
    cluster: { falseDatasets: 0, found: 0, flagged: 0 },
    iteration: { falseDatasets: 0, found: 0, flagged: 0 },
  };
  for (let dataset = 0; dataset < datasets; dataset++) {
    const { run, planted } = simulateClusterWeather({ random, ...options });
    for (const [rule, judged] of [
      ["cluster", judgedRegressions(run)],
      ["iteration", judgedRegressions(withoutClusters(run))],
    ] as const) {
      expect(judged.rule).toBe(rule);
      const found = [...judged.regressions].filter((name) => planted.has(name)).length;
      figures[rule].found += found;
      figures[rule].flagged += judged.regressions.size;
      if (judged.regressions.size > found) figures[rule].falseDatasets++;
    }
  }
  return figures;
}

// Each arm on its own 6 clusters × 4 iterations; a quarter of the clusters bad for half the tests
// at once (odds of failing × 6), and every test's failure log-odds varying between clusters (sd 0.8).
const WEATHER = { tests: 300, clustersPerArm: 6, iterationsPerCluster: 4 };

describe("simulated cluster weather", () => {
  it("null (no difference between the arms): the cluster rule blames the PR in at most 5% of datasets, the iteration rule does not hold", () => {
    const datasets = 150;
    const { cluster, iteration } = simulate({ seed: "cluster-weather-null", datasets, ...WEATHER });
    const q = DEFAULT_ANALYSIS_SETTINGS.q;
    expect(cluster.falseDatasets / datasets).toBeLessThanOrEqual(q);
    // The contrast the cluster rule exists for: counted as independent draws, weather looks like a regression.
    expect(iteration.falseDatasets / datasets).toBeGreaterThan(q);
    expect(iteration.falseDatasets).toBeGreaterThan(3 * Math.max(1, cluster.falseDatasets));
  });

  it("planted regressions on every PR cluster (+50 points on 10 of 300 tests): most are found, other tests rarely blamed", () => {
    const datasets = 60;
    const planted = 10;
    const { cluster } = simulate({
      seed: "cluster-weather-planted",
      datasets,
      ...WEATHER,
      planted,
      plantedIncrease: 0.5,
    });
    const power = cluster.found / (datasets * planted);
    expect(power).toBeGreaterThan(0.55);
    // Of everything flagged, the share that was not planted stays within the FDR.
    expect((cluster.flagged - cluster.found) / cluster.flagged).toBeLessThanOrEqual(
      DEFAULT_ANALYSIS_SETTINGS.q,
    );
  });

  it("judges regressions as judgeTests does, whichever rule and however the arms meet clusters (what the datasets above are judged by)", () => {
    const random = seededRandom("judged-regressions");
    const regressionsOf = (run: AggregatedRun) =>
      new Set(
        judgeTests({ run })
          .tests.filter((test) => test.class === "regression")
          .map((test) => test.name),
      );
    let compared = 0;
    for (const options of [
      { ...WEATHER, planted: 10, plantedIncrease: 0.5 },
      { ...WEATHER, planted: 10, plantedIncrease: 0.3, sharedClusters: true },
      { ...WEATHER, sharedClusters: true, upgrade: { testShare: 0.1, odds: 6 } },
    ])
      for (let dataset = 0; dataset < 3; dataset++) {
        const { run } = simulateClusterWeather({ random, ...options });
        for (const judged of [run, withoutClusters(run)]) {
          const regressions = judgedRegressions(judged).regressions;
          expect(regressions).toEqual(regressionsOf(judged));
          compared += regressions.size;
        }
      }
    // The comparison had regressions to compare, not only empty sets.
    expect(compared).toBeGreaterThan(50);
  });

  it("with one cluster per arm judges no difference at all and says why", () => {
    const random = seededRandom("one-cluster-per-arm");
    const { run } = simulateClusterWeather({
      random,
      tests: 200,
      clustersPerArm: 1,
      iterationsPerCluster: 20,
      planted: 5,
      plantedIncrease: 0.7,
    });
    const judged = judgeTests({ run });
    expect(judged.rule).toBe("cluster");
    expect(judged.clusters?.onePerArm).toBe(true);
    expect(judged.ruleNote).toContain(
      "1 cluster per arm: a failure-rate difference cannot be told apart from the cluster",
    );
    expect(judged.counts.regression).toBe(0);
    expect(judged.counts.fixed).toBe(0);
    const failing = judged.tests.filter(
      (test) => test.pr.failures > 0 && test.class !== "consistent-failure",
    );
    expect(failing.length).toBeGreaterThan(5);
    for (const test of failing) {
      expect(test.class).toBe("inconclusive");
      expect(test.reason).toContain("cannot be told apart from the cluster");
    }
    // The same data counted as independent iterations would have blamed the PR.
    expect(judgeTests({ run: withoutClusters(run) }).counts.regression).toBeGreaterThan(0);
  });
});
