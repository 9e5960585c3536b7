import { judgeTests } from "../../src/analysis/judge-tests.ts";
import type { AggregatedRun } from "../../src/analysis/types.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import {
  simulateClusterWeather,
  type ClusterWeatherOptions,
} from "../../test/analysis/cluster-weather-simulation.ts";

/**
 * The cluster-weather simulation of test/analysis/cluster-simulation.test.ts at a larger scale, the
 * cluster rule beside the iteration rule on the same datasets.
 * Usage: node --import tsx bench/analysis/cluster-weather-simulation.ts [DATASETS] [TESTS] [SCENARIO…]
 * A scenario is JSON of ClusterWeatherOptions overrides, e.g. '{"clustersPerArm":3,"iterationsPerCluster":8}'.
 */
const [datasetsArgument = "1000", testsArgument = "1000", ...scenarioArguments] = process.argv.slice(2);
const datasets = Number(datasetsArgument);
const tests = Number(testsArgument);
const scenarios: Partial<ClusterWeatherOptions>[] =
  scenarioArguments.length > 0
    ? scenarioArguments.map((text) => JSON.parse(text) as Partial<ClusterWeatherOptions>)
    : [
        {},
        { planted: 10, plantedIncrease: 0.3 },
        { planted: 10, plantedIncrease: 0.5 },
        { clustersPerArm: 3, iterationsPerCluster: 8 },
        { clustersPerArm: 12, iterationsPerCluster: 2 },
        { iterationsPerCluster: 10 },
        { iterationsPerCluster: 10, planted: 10, plantedIncrease: 0.3 },
        { badOdds: 15, clusterSpread: 1.2 },
        { clusterSpread: 0, badClusterShare: 0 },
      ];

function withoutClusters(run: AggregatedRun): AggregatedRun {
  const { clusters: _clusters, ...plain } = run;
  return plain;
}

for (const scenario of scenarios) {
  const random = seededRandom(`bench-cluster-weather ${JSON.stringify(scenario)}`);
  const figures = {
    cluster: { falseDatasets: 0, found: 0, flagged: 0 },
    iteration: { falseDatasets: 0, found: 0, flagged: 0 },
  };
  let plantedTotal = 0;
  const started = performance.now();
  for (let dataset = 0; dataset < datasets; dataset++) {
    const { run, planted } = simulateClusterWeather({
      random,
      tests,
      clustersPerArm: 6,
      iterationsPerCluster: 4,
      ...scenario,
    });
    plantedTotal += planted.size;
    for (const [rule, judged] of [
      ["cluster", judgeTests({ run })],
      ["iteration", judgeTests({ run: withoutClusters(run) })],
    ] as const) {
      const regressions = judged.tests.filter((test) => test.class === "regression");
      const found = regressions.filter((test) => planted.has(test.name)).length;
      figures[rule].found += found;
      figures[rule].flagged += regressions.length;
      if (regressions.length > found) figures[rule].falseDatasets++;
    }
  }
  const describe = (figure: (typeof figures)["cluster"]) =>
    `false-regression datasets ${((100 * figure.falseDatasets) / datasets).toFixed(1)}%` +
    (plantedTotal > 0
      ? `, power ${((100 * figure.found) / plantedTotal).toFixed(1)}%, false share of flagged ${(
          (100 * (figure.flagged - figure.found)) /
          Math.max(1, figure.flagged)
        ).toFixed(1)}%`
      : "");
  console.log(
    `${JSON.stringify(scenario)} — ${datasets} datasets × ${tests} tests (${((performance.now() - started) / 1000).toFixed(0)} s)\n` +
      `  cluster rule:   ${describe(figures.cluster)}\n  iteration rule: ${describe(figures.iteration)}`,
  );
}
