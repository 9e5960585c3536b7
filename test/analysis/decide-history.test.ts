import { describe, expect, it } from "vitest";
import { decideBatch } from "../../src/analysis/decide-batch.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulateAdaptiveRun, type AdaptiveRunOptions } from "./adaptive-run-simulation.ts";

const PLUS_30 = { from: 0.02, to: 0.32 };
const COSTS = { cluster: 200, upgrade: 50 };

/** Runs stopped whenever decided, under the cluster simulation's weather (flaky tests, a quarter of clusters bad). */
function runMany(seed: string, datasets: number, options: Omit<AdaptiveRunOptions, "random">) {
  const random = seededRandom(seed);
  let falseDatasets = 0;
  let found = 0;
  let spent = 0;
  for (let dataset = 0; dataset < datasets; dataset++) {
    const run = simulateAdaptiveRun({ random, ...options });
    const regressions = run.decision.tests.filter((test) => test.decision === "regression");
    if (regressions.some((test) => !run.planted.has(test.name))) falseDatasets++;
    found += regressions.filter((test) => run.planted.has(test.name)).length;
    spent += run.decision.spent;
  }
  return { falseDatasets, found, spent };
}

describe("decide with the stream's history standing in for the baseline arm", () => {
  it("null runs with a history, stopped whenever decided: a false regression in at most 5% of them", () => {
    const datasets = 100;
    const { falseDatasets } = runMany("decide-history-null", datasets, {
      tests: 30,
      payloads: "differ",
      target: PLUS_30,
      costs: COSTS,
      budget: 60_000,
      historyPayloads: 20,
    });
    expect(falseDatasets / datasets).toBeLessThanOrEqual(0.05);
  });

  it("decides a null run for less than without it when the upgrade itself changes tests, and still finds a planted +30-point regression", () => {
    const options = {
      tests: 30,
      payloads: "differ" as const,
      target: PLUS_30,
      // The bench's prices for a suite of 30 tests: an install 4.5 iterations of it, an upgrade 3.
      costs: { cluster: 135, upgrade: 90 },
      budget: 20_000,
      plantedIncrease: 0.3,
      plantedBaseRate: 0.02,
      // The bench's upgrade effect: a tenth of the tests 4× as likely to fail (odds) once upgraded.
      upgradeEffect: Math.log(4),
      upgradeShare: 0.1,
    };
    // A contrast against a history payload involves no upgrade, so what an upgrade changes needs no
    // confirmation pairs there.
    const nullWithout = runMany("decide-history-null-cost", 30, options);
    const nullWith = runMany("decide-history-null-cost", 30, { ...options, historyPayloads: 20 });
    expect(nullWith.spent).toBeLessThan(0.85 * nullWithout.spent);
    const planted = runMany("decide-history-power", 30, { ...options, planted: 1, historyPayloads: 20 });
    expect(planted.found).toBeGreaterThanOrEqual(24);
    expect(planted.falseDatasets).toBe(0);
  });

  it("asks first for new clusters on the PR payload alone, one per history payload, and refuses a history when the payloads are the same", () => {
    const settings = { tests: ["a"], target: PLUS_30, costs: COSTS, budget: 100_000 };
    const history = Array.from({ length: 6 }, () => ({
      tests: { a: { executions: 30, failures: 1, flakes: 0 } },
    }));
    const first = decideBatch({ ...settings, payloads: "differ", history }).decision.next!;
    expect(first.clusters.baseline).toEqual([]);
    expect(first.upgrade).toEqual([]);
    expect(first.clusters.pr).toHaveLength(4);
    expect(() => decideBatch({ ...settings, payloads: "same", history })).toThrow(
      "only when the payloads differ",
    );
  });
});
