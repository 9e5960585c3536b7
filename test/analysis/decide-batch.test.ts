import { describe, expect, it } from "vitest";
import { decideBatch } from "../../src/analysis/decide-batch.ts";
import type { DecideRecord } from "../../src/analysis/decide-records.ts";
import { decideStateSchema } from "../../src/analysis/decide-state.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulateAdaptiveRun, type AdaptiveRunOptions } from "./adaptive-run-simulation.ts";

const PLUS_30 = { from: 0.02, to: 0.32 };
const COSTS = { cluster: 200, upgrade: 50 };
/** A crossover run of 30 tests whose budget leaves it room to decide them all. */
const CROSSOVER_RUN = {
  tests: 30,
  payloads: "differ" as const,
  target: PLUS_30,
  costs: COSTS,
  budget: 60_000,
};

/** Never asks a cluster for both arms in one batch, nor for the baseline payload once it ran the PR's. */
function expectOnePayloadAtATime(
  next: { clusters: { pr: string[]; baseline: string[] }; upgrade: string[] },
  history: readonly (readonly DecideRecord[])[],
) {
  const ranPr = new Set(
    history
      .flat()
      .filter((r) => r.arm === "pr")
      .map((r) => r.cluster),
  );
  const ranBaseline = new Set(
    history
      .flat()
      .filter((r) => r.arm === "baseline")
      .map((r) => r.cluster),
  );
  for (const cluster of next.clusters.baseline) {
    expect(next.clusters.pr).not.toContain(cluster);
    expect(ranPr.has(cluster)).toBe(false);
  }
  for (const cluster of next.clusters.pr) {
    expect(ranPr.has(cluster)).toBe(false);
    // Upgraded from the baseline payload, or new on the PR payload (a suspect's confirmation).
    expect(next.upgrade.includes(cluster)).toBe(ranBaseline.has(cluster));
  }
  for (const cluster of next.upgrade) expect(next.clusters.pr).toContain(cluster);
}

function runMany(seed: string, datasets: number, options: Omit<AdaptiveRunOptions, "random">) {
  const random = seededRandom(seed);
  let falseDatasets = 0;
  let found = 0;
  let allDecided = 0;
  for (let dataset = 0; dataset < datasets; dataset++) {
    const run = simulateAdaptiveRun({
      random,
      ...options,
      ...(options.payloads === "differ" ? { onBatch: expectOnePayloadAtATime } : {}),
    });
    const regressions = run.decision.tests.filter((test) => test.decision === "regression");
    if (regressions.some((test) => !run.planted.has(test.name))) falseDatasets++;
    found += regressions.filter((test) => run.planted.has(test.name)).length;
    if (run.decision.stopped === "all tests decided") allDecided++;
  }
  return { falseDatasets, found, allDecided };
}

describe("decide: the adaptive run's decision step", () => {
  it.each(["same", "differ"] as const)(
    "null runs stopped whenever decided (payloads %s): a false regression in at most 5% of them, under cluster weather",
    (payloads) => {
      const datasets = 40;
      const { falseDatasets, allDecided } = runMany(`decide-null-${payloads}`, datasets, {
        tests: 30,
        payloads,
        target: PLUS_30,
        costs: COSTS,
        budget: 60_000,
      });
      expect(falseDatasets / datasets).toBeLessThanOrEqual(0.05);
      // The runs did stop by deciding, not by running out: the stopping was optional.
      expect(allDecided).toBeGreaterThan(datasets / 2);
    },
  );

  it("null crossovers where the upgrade itself makes a fifth of the tests 4× as likely to fail: the PR is blamed in at most 5% of runs, and those tests are called clean", () => {
    const datasets = 20;
    let blamed = 0;
    let upgradeCleared = 0;
    const random = seededRandom("decide-null-upgrade-effect");
    for (let dataset = 0; dataset < datasets; dataset++) {
      const run = simulateAdaptiveRun({
        random,
        tests: 30,
        payloads: "differ",
        target: PLUS_30,
        costs: COSTS,
        budget: 200_000,
        upgradeEffect: Math.log(4),
        upgradeShare: 0.2,
        onBatch: expectOnePayloadAtATime,
      });
      if (run.decision.tests.some((test) => test.decision === "regression")) blamed++;
      upgradeCleared += run.decision.tests.filter(
        (test) => test.decision === "clean" && test.confirmation,
      ).length;
    }
    expect(blamed / datasets).toBeLessThanOrEqual(0.05);
    // Some suspects were cleared by clusters never upgraded: the rule was put to work.
    expect(upgradeCleared).toBeGreaterThan(0);
  });

  it.each(["same", "differ"] as const)("finds a planted +30-point regression (payloads %s)", (payloads) => {
    const datasets = 10;
    const { found, falseDatasets } = runMany(`decide-planted-${payloads}`, datasets, {
      tests: 30,
      payloads,
      target: PLUS_30,
      costs: COSTS,
      budget: 60_000,
      planted: 1,
      plantedIncrease: 0.3,
      plantedBaseRate: 0.02,
    });
    expect(found).toBeGreaterThanOrEqual(8);
    expect(falseDatasets).toBe(0);
  });

  it("asks for the first batch on new clusters, and stops when every test is decided", () => {
    const { decision: first } = decideBatch({
      tests: ["a", "b"],
      target: PLUS_30,
      payloads: "differ",
      costs: COSTS,
      budget: 10_000,
    });
    expect(first.next?.clusters.pr).toEqual([]);
    expect(first.next?.clusters.baseline).toHaveLength(4);
    expect(first.next?.tests).toEqual(["a", "b"]);
    expect(first.stopped).toBeNull();
    const clean = simulateAdaptiveRun({
      random: seededRandom("decide-clean"),
      tests: 5,
      payloads: "same",
      target: PLUS_30,
      costs: COSTS,
      budget: 60_000,
      baseRate: () => 0,
    });
    expect(clean.decision.stopped).toBe("all tests decided");
    expect(clean.decision.next).toBeNull();
    expect(clean.decision.tests.every((test) => test.decision === "clean")).toBe(true);
  });

  it("never asks to upgrade a cluster that is gone before its upgrade (given back), and what it cost stays spent", () => {
    const baselineOn = (cluster: string): DecideRecord => ({
      arm: "baseline",
      cluster,
      iteration: 0,
      name: "a",
      result: "passed",
    });
    const input = {
      tests: ["a"],
      target: PLUS_30,
      payloads: "differ" as const,
      costs: COSTS,
      budget: 10_000,
      batches: [["c1", "c2", "c3"].map(baselineOn)],
    };
    const all = decideBatch(input).decision;
    expect(all.next?.upgrade).toEqual(["c1", "c2", "c3"]);
    const held = decideBatch({ ...input, held: ["c1", "c3"] }).decision;
    expect(held.next?.upgrade).toEqual(["c1", "c3"]);
    expect(held.next?.clusters.pr).toEqual(["c1", "c3"]);
    expect(held.spent).toBe(all.spent);
  });

  it("never holds more clusters at once than the cluster source's quota allows, waiting ones included, and still finds a regression", () => {
    let found = 0;
    const random = seededRandom("decide-at-once");
    for (let dataset = 0; dataset < 10; dataset++) {
      const held = new Set<string>();
      let most = 0;
      const run = simulateAdaptiveRun({
        random,
        ...CROSSOVER_RUN,
        planted: 1,
        atOnce: 3,
        onBatch: (next) => {
          for (const id of next.release) held.delete(id);
          for (const id of [...next.clusters.pr, ...next.clusters.baseline]) held.add(id);
          most = Math.max(most, held.size);
          // A cluster is done with once it ran the PR payload.
          for (const id of next.clusters.pr) held.delete(id);
        },
      });
      expect(most).toBeLessThanOrEqual(3);
      if (run.decision.tests.some((test) => test.decision === "regression" && run.planted.has(test.name)))
        found++;
    }
    expect(found).toBeGreaterThanOrEqual(7);
    expect(() =>
      decideBatch({
        tests: ["a"],
        target: PLUS_30,
        payloads: "differ",
        costs: COSTS,
        budget: 1000,
        atOnce: 1,
      }),
    ).toThrow("a crossover needs at least 2 clusters at once");
  });

  it("starts new clusters only once none waits for its PR half, but for suspects' pairs, and runs a batch of pairs alone at 16 iterations", () => {
    const random = seededRandom("decide-sequential");
    const seen = { finishing: 0, pairsAlone: 0 };
    for (let dataset = 0; dataset < 10; dataset++) {
      let onlySuspects = false;
      simulateAdaptiveRun({
        random,
        ...CROSSOVER_RUN,
        planted: 2,
        onDecision: (decision) => {
          const undecided = decision.tests.filter((test) => test.decision === "undecided");
          onlySuspects = undecided.length > 0 && undecided.every((test) => test.confirmation);
        },
        onBatch: (next) => {
          const confirming = next.clusters.pr.filter((id) => !next.upgrade.includes(id));
          if (next.upgrade.length > 0) {
            seen.finishing++;
            // The PR halves it runs decide most of what a new cluster's baseline half would run.
            expect(next.clusters.baseline.length).toBeLessThanOrEqual(confirming.length);
          }
          if (onlySuspects) {
            seen.pairsAlone++;
            expect(next.iterations).toBe(16);
            expect(next.clusters.baseline).toHaveLength(confirming.length);
          } else expect(next.iterations).toBe(8);
        },
      });
    }
    expect(seen.finishing).toBeGreaterThan(10);
    expect(seen.pairsAlone).toBeGreaterThan(5);
  });

  it("refuses records where a cluster went back from the PR payload to the baseline's", () => {
    const record = (arm: "pr" | "baseline"): DecideRecord => ({
      arm,
      cluster: "c1",
      iteration: 0,
      name: "a",
      result: "passed",
    });
    const settings = {
      tests: ["a"],
      target: PLUS_30,
      payloads: "differ" as const,
      costs: COSTS,
      budget: 10_000,
    };
    const { state } = decideBatch({ ...settings, batches: [[record("pr")]] });
    expect(() => decideBatch({ ...settings, state, batches: [[record("baseline")]] })).toThrow("never back");
  });

  it("stops when the budget is spent, and says so", () => {
    const run = simulateAdaptiveRun({
      random: seededRandom("decide-budget"),
      tests: 30,
      payloads: "same",
      target: { from: 0.02, to: 0.1 },
      costs: COSTS,
      budget: 2_000,
    });
    expect(run.decision.stopped).toBe("budget spent");
    expect(run.decision.spent).toBeLessThanOrEqual(2_000);
  });

  it("goes on from a state written as JSON even when an e-value outgrew a double, and refuses a state made for another target", () => {
    // 1,200 clusters where the PR failed and the baseline passed: the regression e-value is +∞.
    const batch: DecideRecord[] = Array.from({ length: 1200 }, (_, i) =>
      (["pr", "baseline"] as const).map((arm): DecideRecord => ({
        arm,
        cluster: `c${i}`,
        iteration: 0,
        name: "a",
        result: arm === "pr" ? "failed" : "passed",
      })),
    ).flat();
    const settings = { tests: ["a"], target: PLUS_30, payloads: "same" as const, costs: COSTS, budget: 1e9 };
    const first = decideBatch({ ...settings, batches: [batch] });
    expect(first.decision.tests[0]!.eRegression).toBe(Infinity);
    const state = decideStateSchema.parse(JSON.parse(JSON.stringify(first.state)));
    expect(decideBatch({ ...settings, state }).decision).toEqual(first.decision);
    expect(() => decideBatch({ ...settings, target: { from: 0.02, to: 0.1 }, state })).toThrow(
      "a run keeps its design and target",
    );
  });
});
