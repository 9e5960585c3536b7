import { failedIterations } from "../../src/analysis/failed-iterations.ts";
import { passesGuards } from "../../src/analysis/flag-rule.ts";
import { ANALYSIS_WEATHER, type PowerDesign, type WeatherModel } from "../../src/analysis/power-types.ts";
import { simulatePower } from "../../src/analysis/simulate-power.ts";
import { DEFAULT_ANALYSIS_SETTINGS } from "../../src/analysis/types.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulateClusterWeather } from "./cluster-weather-simulation.ts";
import { judgedRegressions } from "./judged-regressions.ts";

const settings = DEFAULT_ANALYSIS_SETTINGS;

/**
 * Power measured the long way, independently of the planner: whole runs drawn by the analysis'
 * own cluster-weather simulation with `planted` regressed tests among `design.tests` others, each
 * judged as `judgeTests` judges it (`judgedRegressions`: its rule, the dispersion prior fitted
 * across the run, every test's p-value and the Tarone family). A planted test counts as found when the run would call it a regression were it the
 * run's only one — in the Tarone family, p ≤ q / (the other tests' family + 1), which is where
 * Benjamini–Hochberg rejects a lone discovery, and the guards — the planner's question.
 */
export function judgedPower({
  design,
  baseRate,
  rise,
  datasets,
  planted,
  seed,
  upgrade = ANALYSIS_WEATHER.upgrade,
}: {
  design: PowerDesign;
  baseRate: number;
  rise: number;
  datasets: number;
  planted: number;
  seed: string;
  upgrade?: WeatherModel["upgrade"];
}): number {
  const random = seededRandom(seed);
  let found = 0;
  for (let dataset = 0; dataset < datasets; dataset++) {
    const simulated = simulateClusterWeather({
      random,
      tests: design.tests + planted,
      clustersPerArm: design.clustersPerArm,
      iterationsPerCluster: design.iterationsPerCluster,
      sharedClusters: design.kind !== "separate",
      ...(design.kind === "crossover" ? { upgrade } : {}),
      planted,
      plantedIncrease: rise,
      plantedBaseRate: baseRate,
    });
    const { candidates, familySize } = judgedRegressions(simulated.run);
    const regressed = candidates.filter((candidate) => simulated.planted.has(candidate.test.name));
    const others = familySize - regressed.filter((candidate) => candidate.testable).length;
    for (const { testable, pValue, pr, comparison } of regressed) {
      if (
        testable &&
        pValue! <= settings.q / (others + 1) &&
        passesGuards({ prFailed: failedIterations(pr), comparison: comparison!, settings })
      )
        found++;
    }
  }
  return found / (datasets * planted);
}

// Eight designs, each at a rise its power is 80–90% at: the three kinds, the three test classes, few
// clusters with many iterations and the reverse. 40 tests keep each judged run quick; one
// regression per run, as the planner asks (several would pull the dispersion prior their way).
export const PLANNER_DESIGNS: {
  design: PowerDesign;
  baseRate: number;
  rise: number;
  model?: WeatherModel;
}[] = [
  {
    design: { kind: "separate", clustersPerArm: 4, iterationsPerCluster: 4, tests: 40 },
    baseRate: 0,
    rise: 0.7,
  },
  {
    design: { kind: "separate", clustersPerArm: 6, iterationsPerCluster: 4, tests: 40 },
    baseRate: 0.02,
    rise: 0.6,
  },
  {
    design: { kind: "separate", clustersPerArm: 8, iterationsPerCluster: 3, tests: 40 },
    baseRate: 0.1,
    rise: 0.6,
  },
  {
    design: { kind: "separate", clustersPerArm: 3, iterationsPerCluster: 8, tests: 40 },
    baseRate: 0.02,
    rise: 0.6,
  },
  {
    design: { kind: "shared", clustersPerArm: 4, iterationsPerCluster: 4, tests: 40 },
    baseRate: 0,
    rise: 0.7,
  },
  {
    design: { kind: "shared", clustersPerArm: 6, iterationsPerCluster: 3, tests: 40 },
    baseRate: 0.02,
    rise: 0.65,
  },
  // Crossovers, the second with an upgrade that changes a fifth of the tests (the default's one in
  // fifty is one test in two runs of 40), so that the upgraded tests weigh in the prior and family.
  {
    design: { kind: "crossover", clustersPerArm: 4, iterationsPerCluster: 4, tests: 40 },
    baseRate: 0.02,
    rise: 0.7,
  },
  {
    design: { kind: "crossover", clustersPerArm: 8, iterationsPerCluster: 3, tests: 40 },
    baseRate: 0.1,
    rise: 0.6,
    model: { ...ANALYSIS_WEATHER, upgrade: { testShare: 0.2, odds: 4 } },
  },
];

/**
 * The planner's power on one of those designs and the power 200 whole judged runs show: the
 * planner's at 10 simulated runs × 80 regressions, both seeded.
 */
export function plannerAgainstJudged({
  design,
  baseRate,
  rise,
  model = ANALYSIS_WEATHER,
}: (typeof PLANNER_DESIGNS)[number]): { predicted: number; measured: number } {
  const {
    points: [predicted],
  } = simulatePower({
    design,
    model,
    points: [{ baseRate, rise }],
    rounds: 10,
    copies: 80,
    seed: "planner",
  });
  const measured = judgedPower({
    design,
    baseRate,
    rise,
    datasets: 200,
    planted: 1,
    seed: "judged",
    upgrade: model.upgrade,
  });
  return { predicted: predicted!.power, measured };
}
