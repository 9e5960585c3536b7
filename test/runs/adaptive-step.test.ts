import { describe, expect, it } from "vitest";
import { adaptiveStep } from "../../src/runs/adaptive-step.ts";
import { batchPlan } from "../../src/runs/batch-plan.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { sharedClustersBatch } from "../helpers/shared-clusters-batch.ts";

const MONITOR = "[sig-network][Invariant] pod network should stay reachable";
const NEW_TEST = "[sig-network] a test only the PR has";
const TESTS = ["[sig-network] a", "[sig-network] b", "[sig-network] c"];

const plan = {
  arch: "amd64" as const,
  arms: (["pr", "baseline"] as const).map((arm) => ({
    arm,
    components: [
      { component: "ovn-kubernetes", binary: "/ovn" },
      { component: "sdn", binary: "/sdn" },
    ],
  })),
};

const adaptiveRun = (overrides: Partial<PrRun> = {}): PrRun =>
  runRecord({
    state: "running",
    plan,
    source: { ...runRecord().source, adaptive: { target: { from: 0.02, to: 0.32 }, budgetIterations: 20 } },
    ...overrides,
  });

/** Every test passing on 3 clusters, 2 iterations each per arm; the PR arm also runs its new test. */
function passingBatch(first: number): ResultRecord[] {
  const records: ResultRecord[] = [];
  for (let iteration = first; iteration < first + 6; iteration++)
    for (const arm of ["pr", "baseline"] as const)
      for (const name of [...TESTS, MONITOR, ...(arm === "pr" ? [NEW_TEST] : [])])
        records.push({
          name,
          lifecycle: "blocking",
          duration: 1,
          result: "passed",
          output: "",
          arm,
          arch: "amd64",
          iteration,
          attempt: 0,
          component: "ovn-kubernetes",
          cluster: `hive/c${iteration % 3}`,
        });
  return records;
}

describe("adaptiveStep", () => {
  it("runs every test first, then budgets what a fixed run of the budget's iterations would execute and decides only tests both arms ran", () => {
    const run = adaptiveRun();
    const first = adaptiveStep(run, "shared clusters", []);
    expect(first).toEqual({
      next: { shardId: "amd64-0-5", first: 0, count: 6, clusters: 3, iterationsPerCluster: 2 },
    });
    const records = passingBatch(0);
    const step = adaptiveStep(
      { ...run, adaptive: { design: "shared clusters", batches: [first.next!] } },
      "shared clusters",
      [records],
    );
    // 6 iterations made 54 executions (3 tests and the monitor in both arms, the new test in one): 9 per iteration.
    expect(step.decided!.budget).toBe(20 * 9);
    expect(step.decided!.decision.tests.map((t) => t.name)).toEqual(TESTS);
    expect(step.next).toMatchObject({ first: 6, tests: TESTS, clusters: 3 });
    // The batch's plan: the undecided tests and the monitor of the component that ran them; the other is left out.
    expect(
      batchPlan(plan, step.next!, step.decided!.decision.planning!.listed).arms.map((a) => a.components),
    ).toEqual(
      (["pr", "baseline"] as const).map(() => [
        { component: "ovn-kubernetes", binary: "/ovn", tests: [...TESTS, MONITOR].sort() },
      ]),
    );
  });

  it("gives a run that goes on from another's batches a budget of its own on top of what they spent", () => {
    const batch = { shardId: "amd64-0-5", first: 0, count: 6, clusters: 3, iterationsPerCluster: 2 };
    const child = adaptiveRun({
      firstIteration: 6,
      adaptive: { design: "shared clusters", batches: [batch] },
    });
    const step = adaptiveStep(child, "shared clusters", [passingBatch(0)]);
    expect(step.decided!.budget).toBe(54 + 20 * 9);
    expect(step.next).toMatchObject({ first: 6, shardId: "amd64-6-11" });
  });
});

describe("adaptiveStep with the decision step's saved state", () => {
  it("reads only the batches since the saved decision: the same decisions with the earlier batches' records gone", () => {
    const failing = passingBatch(6).map((record) =>
      record.name === TESTS[0] && record.arm === "pr" ? { ...record, result: "failed" as const } : record,
    );
    const afterFirst = adaptiveStep(
      adaptiveRun({ adaptive: { design: "shared clusters", batches: [sharedClustersBatch(0)] } }),
      "shared clusters",
      [passingBatch(0)],
    );
    const run = adaptiveRun({
      adaptive: {
        design: "shared clusters",
        batches: [sharedClustersBatch(0), sharedClustersBatch(6)],
        budget: afterFirst.decided!.budget,
        decision: afterFirst.decided!.decision,
      },
    });
    const rereading = adaptiveStep(run, "shared clusters", [passingBatch(0), failing]);
    const fromState = adaptiveStep(run, "shared clusters", [[], failing]);
    expect(fromState).toEqual(rereading);
    expect(fromState.decided!.decision.tests[0]).toMatchObject({
      name: TESTS[0],
      contrasts: 6,
      meanContrast: 0.5,
    });
  });
});
