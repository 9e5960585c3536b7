import { describe, expect, it } from "vitest";
import { ANALYSIS_WEATHER } from "../../src/analysis/power-types.ts";
import { runDesignPower, type RunDesign } from "../../src/analysis/run-design-power.ts";
import { simulateWeatherCounts } from "../../src/analysis/simulate-weather-counts.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { powerLine } from "../../src/runs/power-line.ts";

const TARGET = { from: 0.02, to: 0.52 };
const adaptive = (batchesOn: "shared" | "crossover"): RunDesign => ({
  kind: "adaptive",
  batchesOn,
  clustersPerArm: 4,
  iterationsPerCluster: 4,
  tests: 12,
  testsAssumed: false,
  budgetIterations: 100,
});
const plan = (design: RunDesign) => runDesignPower({ design, target: TARGET, maxClustersPerArm: 10 });

describe("what an adaptive run's design can see", () => {
  it("plans a run whose payloads differ as the crossover it runs: an upgrade on every cluster, and the line names it", () => {
    const crossover = plan(adaptive("crossover"));
    const shared = plan(adaptive("shared"));
    // 4 clusters, each a 45-minute install, a 30-minute upgrade and 4 + 4 iterations of 10 minutes.
    expect(crossover.cost).toEqual({ clusters: 4, clusterHours: 10.3 });
    expect(shared.cost).toEqual({ clusters: 4, clusterHours: 8.3 });
    const line = powerLine(crossover);
    expect(line).toContain(
      "(adaptive: crossover by upgrade, each cluster running the baseline payload, then upgraded to the PR payload, 12 tests)",
    );
    expect(line).toContain(
      "spent as a fixed crossover run (4 clusters × 4 iterations per arm, installs and upgrades included), the budget would see",
    );
    expect(line).not.toContain("shared clusters");
  });

  it("gives a crossover's clusters the same weather in both arms, as shared clusters, not separate clusters' own, and its PR arm the upgrade's effect", () => {
    const counts = (kind: "shared" | "crossover" | "separate", upgrade = { testShare: 0, odds: 1 }) =>
      simulateWeatherCounts({
        random: seededRandom("weather"),
        model: { ...ANALYSIS_WEATHER, upgrade },
        design: { kind, clustersPerArm: 4, iterationsPerCluster: 4 },
        background: 50,
      });
    expect(counts("crossover")).toEqual(counts("shared"));
    expect(counts("crossover")).not.toEqual(counts("separate"));
    // Every test made flakier by the upgrade: the PR arm, run after it, fails more often.
    const upgraded = counts("crossover", { testShare: 1, odds: 4 });
    const failed = (arm: 0 | 1) =>
      upgraded.background.reduce((total, arms) => total + arms[arm].failed.reduce((a, b) => a + b, 0), 0);
    expect(upgraded.upgraded.every(Boolean)).toBe(true);
    expect(failed(0)).toBeGreaterThan(1.5 * failed(1));
    expect(counts("shared", { testShare: 1, odds: 4 }).upgraded.some(Boolean)).toBe(false);
  });
});
