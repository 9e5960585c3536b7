import { describe, expect, it } from "vitest";
import { decideBatch, type DecideInput } from "../../src/analysis/decide-batch.ts";
import type { DecideRecord } from "../../src/analysis/decide-records.ts";
import { decideStateSchema } from "../../src/analysis/decide-state.ts";

const SETTINGS: DecideInput = {
  tests: ["a"],
  target: { from: 0.02, to: 0.32 },
  payloads: "differ",
  costs: { cluster: 0, upgrade: 0 },
  budget: 1_000_000,
};

/** One arm's four iterations of test a on `cluster`, the iterations in `failing` failed. */
function half(arm: DecideRecord["arm"], cluster: string, failing: number[]): DecideRecord[] {
  return [0, 1, 2, 3].map((iteration) => ({
    arm,
    cluster,
    iteration,
    name: "a",
    result: failing.includes(iteration) ? "failed" : "passed",
  }));
}

describe("a crossover's contrasts through an upgrade, in blocks of iterations", () => {
  it("gives each block of two iterations of a cluster's PR half a contrast against the same block of its baseline half", () => {
    const first = decideBatch({ ...SETTINGS, batches: [half("baseline", "u1", [2, 3])] });
    const { decision } = decideBatch({
      ...SETTINGS,
      state: first.state,
      batches: [half("pr", "u1", [0, 1, 2, 3])],
    });
    // Block 1: both failed in the PR, none in the baseline (+1); block 2: both failed in each (0).
    expect(decision.tests[0]).toMatchObject({ contrasts: 2, clusters: 1, meanContrast: 0.5 });
  });

  it("reads a state saved before blocks, its baseline runs on a cluster as one block", () => {
    const first = decideBatch({ ...SETTINGS, batches: [half("baseline", "u1", [2, 3])] });
    const saved = JSON.parse(JSON.stringify(first.state)) as { tests: { waiting: unknown[] }[] };
    saved.tests[0]!.waiting = [{ cluster: 0, runs: 4, failed: 2 }];
    const state = decideStateSchema.parse(saved);
    const { decision } = decideBatch({ ...SETTINGS, state, batches: [half("pr", "u1", [0, 1, 2, 3])] });
    // The PR half's first block (2 of 2 failed) against the four baseline runs (2 of 4 failed).
    expect(decision.tests[0]).toMatchObject({ contrasts: 1, meanContrast: 0.5 });
  });
});
