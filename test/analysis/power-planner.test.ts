import { describe, expect, it } from "vitest";
import { cheapestDesign } from "../../src/analysis/cheapest-design.ts";
import { failedIterations } from "../../src/analysis/failed-iterations.ts";
import { passesGuards } from "../../src/analysis/flag-rule.ts";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { planPower } from "../../src/analysis/plan-power.ts";
import { ANALYSIS_WEATHER, type PowerDesign } from "../../src/analysis/power-types.ts";
import { simulatePower } from "../../src/analysis/simulate-power.ts";
import { DEFAULT_ANALYSIS_SETTINGS } from "../../src/analysis/types.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulateClusterWeather } from "./cluster-weather-simulation.ts";

const settings = DEFAULT_ANALYSIS_SETTINGS;

/**
 * Power measured the long way, independently of the planner: whole runs drawn by the analysis'
 * own cluster-weather simulation with `planted` regressed tests among `design.tests` others, each
 * judged by `judgeTests`. A planted test counts as found when the run would call it a regression
 * were it the run's only one — in the Tarone family, p ≤ q / (the other tests' family + 1), which
 * is where Benjamini–Hochberg rejects a lone discovery, and the guards — the planner's question.
 */
function judgedPower({
  design,
  baseRate,
  rise,
  datasets,
  planted,
  seed,
}: {
  design: PowerDesign;
  baseRate: number;
  rise: number;
  datasets: number;
  planted: number;
  seed: string;
}): number {
  const random = seededRandom(seed);
  let found = 0;
  for (let dataset = 0; dataset < datasets; dataset++) {
    const simulated = simulateClusterWeather({
      random,
      tests: design.tests + planted,
      clustersPerArm: design.clustersPerArm,
      iterationsPerCluster: design.iterationsPerCluster,
      sharedClusters: design.kind === "shared",
      planted,
      plantedIncrease: rise,
      plantedBaseRate: baseRate,
    });
    const judged = judgeTests({ run: simulated.run });
    const regressed = judged.tests.filter((test) => simulated.planted.has(test.name));
    const others = judged.familySize - regressed.filter((test) => test.qValue !== null).length;
    for (const test of regressed) {
      const prFailed = failedIterations(test.pr);
      const comparison = {
        prRuns: test.pr.runs,
        baselineRuns: test.baseline.runs,
        baselineFailed: failedIterations(test.baseline),
      };
      if (
        test.qValue !== null &&
        test.pValue! <= settings.q / (others + 1) &&
        passesGuards({ prFailed, comparison, settings })
      )
        found++;
    }
  }
  return found / (datasets * planted);
}

// Six designs, each at a rise its power is 80–90% at: both kinds, the three test classes, few
// clusters with many iterations and the reverse. 40 tests keep each judged run quick; one
// regression per run, as the planner asks (several would pull the dispersion prior their way).
const DESIGNS: { design: PowerDesign; baseRate: number; rise: number }[] = [
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
];

describe("power planner", () => {
  it.each(DESIGNS)(
    "predicts within 5 points the power whole judged runs show: $design.kind $design.clustersPerArm × $design.iterationsPerCluster, $baseRate + $rise",
    ({ design, baseRate, rise }) => {
      const [predicted] = simulatePower({
        design,
        model: ANALYSIS_WEATHER,
        points: [{ baseRate, rise }],
        rounds: 10,
        copies: 80,
        seed: "planner",
      });
      const measured = judgedPower({ design, baseRate, rise, datasets: 200, planted: 1, seed: "judged" });
      expect(predicted!.power).toBeGreaterThan(0.5);
      expect(Math.abs(predicted!.power - measured)).toBeLessThanOrEqual(0.05);
    },
  );

  it("states per test class the smallest rise seen at 80% power, larger for flakier tests, and the design's cost", () => {
    const plan = planPower({
      design: { kind: "separate", clustersPerArm: 6, iterationsPerCluster: 4, tests: 100 },
      model: ANALYSIS_WEATHER,
      costs: { installMinutes: 45, iterationMinutes: 10 },
      seed: "plan",
      rounds: 4,
      copies: 25,
    });
    expect(plan.cost).toEqual({ clusters: 12, clusterHours: 17 });
    const [clean, flake2, flake10] = plan.classes.map((entry) => entry.detectableRise);
    expect(clean).not.toBeNull();
    expect(flake2!).toBeGreaterThanOrEqual(clean!);
    expect(flake10!).toBeGreaterThan(clean!);
    expect(plan.simulation.seed).toBe("plan");
  });

  it("finds a cheapest design for a stated change whose power, measured on judged runs, is at least 80%", () => {
    const choice = cheapestDesign({
      from: 0.02,
      to: 0.72,
      kind: "shared",
      tests: 40,
      model: ANALYSIS_WEATHER,
      costs: { installMinutes: 45, iterationMinutes: 10 },
      seed: "reverse",
      iterationChoices: [3, 5],
      maxClusters: 12,
    });
    expect(choice).not.toBeNull();
    const measured = judgedPower({
      design: choice!.design,
      baseRate: 0.02,
      rise: 0.7,
      datasets: 200,
      planted: 1,
      seed: "reverse-judged",
    });
    expect(measured).toBeGreaterThanOrEqual(0.8);
  });
});
