import { describe, expect, it } from "vitest";
import { runDesignPower } from "../../src/analysis/run-design-power.ts";
import { runPowerDesign } from "../../src/queue/run-power-design.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { powerLine } from "../../src/runs/power-line.ts";
import { runRecord } from "../helpers/github-run-deps.ts";

const plan = (arms: ("pr" | "baseline")[], tests?: string[]): ExecutionPlan => ({
  arch: "amd64",
  arms: arms.map((arm) => ({
    arm,
    components: [{ component: "ovn-kubernetes", binary: "/nonexistent", ...(tests ? { tests } : {}) }],
  })),
});
const RELEASED = `quay.io/openshift-release-dev/ocp-release@sha256:${"a".repeat(64)}`;
const PR_PAYLOAD = `quay.io/netstress/pr-payload@sha256:${"b".repeat(64)}`;

/** A repository's settings for an adaptive run against the released payload, at 0.02:0.1. */
const adaptiveSource = (budgetIterations: number) => ({
  tags: [],
  payload: RELEASED,
  parallel: 2,
  timeoutMinutes: 60,
  imageWaitMinutes: 30,
  adaptive: { target: { from: 0.02, to: 0.1 }, budgetIterations },
});

/** An adaptive run (12 iterations, 3 clusters when fixed) whose arms run different payloads. */
const adaptiveCrossover = (budgetIterations: number) =>
  runRecord({
    plan: plan(["pr", "baseline"]),
    options: { iterations: 12, baseline: "payload" },
    payloads: { pr: PR_PAYLOAD, baseline: RELEASED },
    source: { ...adaptiveSource(budgetIterations), clusters: 3 },
  });

describe("the design the power planner is asked about", () => {
  it("spreads a fixed run's iterations over its clusters per arm, the fewer per cluster where they do not divide", () => {
    const run = runRecord({
      options: { iterations: 11, baseline: "payload" },
      plan: plan(["pr", "baseline"], ["a", "b", "c"]),
    });
    expect(runPowerDesign({ ...run, source: { ...run.source, clusters: 3 } }, { moves: false })).toEqual({
      kind: "separate",
      clustersPerArm: 3,
      iterationsPerCluster: 3,
      tests: 3,
      testsAssumed: false,
    });
    // Fewer iterations than clusters use one cluster per iteration; without listed tests, 500 are assumed.
    expect(
      runPowerDesign(
        runRecord({ options: { iterations: 1, baseline: "payload" }, plan: plan(["pr", "baseline"]) }),
        { moves: false },
      ),
    ).toMatchObject({ clustersPerArm: 1, iterationsPerCluster: 1, tests: 500, testsAssumed: true });
  });

  it("plans an adaptive run on shared clusters as its first batch's clusters and its budget on them", () => {
    const run = runRecord({ plan: plan(["pr", "baseline"]), source: adaptiveSource(20) });
    expect(runPowerDesign(run, { moves: false })).toMatchObject({
      kind: "adaptive",
      batchesOn: "shared",
      clustersPerArm: 3,
      iterationsPerCluster: 6,
      budgetIterations: 20,
    });
  });

  it("plans an adaptive run whose arms' payloads differ as a crossover by upgrade where the cluster source may move its clusters", () => {
    const design = runPowerDesign(adaptiveCrossover(20), { moves: true })!;
    expect(design).toMatchObject({ kind: "adaptive", batchesOn: "crossover", budgetIterations: 20 });
    expect(
      powerLine(runDesignPower({ design, target: { from: 0.02, to: 0.1 }, maxClustersPerArm: 10 })),
    ).toMatch(/adaptive: crossover by upgrade/);
  });

  it("plans an adaptive run whose arms' payloads differ, where no cluster source may move its clusters, as the fixed run on separate clusters it runs, and says why", () => {
    const run = adaptiveCrossover(20);
    const design = runPowerDesign(run, { moves: false })!;
    expect(design).toEqual({
      kind: "separate",
      clustersPerArm: 3,
      iterationsPerCluster: 4,
      tests: 500,
      testsAssumed: true,
      adaptiveAsFixed:
        "the arms run different payloads, and a crossover by upgrade moves each cluster from the baseline payload to the PR payload: no cluster source may move its clusters (a Hive source, or static clusters with upgrade: true)",
    });
    // Its check run and gate say so before it runs, and name the design it runs.
    const line = powerLine(
      runDesignPower({ design, target: { from: 0.02, to: 0.1 }, maxClustersPerArm: 10 }),
    );
    expect(line).toMatch(
      /^mode: adaptive runs as a fixed run here: the arms run different payloads, .*\. This run can see .* with 80% power \(3 clusters × 4 iterations per arm, separate clusters, 500 tests assumed/,
    );
  });

  it("plans a crossover within its cluster source's quota, and one whose source may move fewer than 2 clusters at once as the fixed run it runs", () => {
    const run = adaptiveCrossover(200);
    expect(runPowerDesign(run, { moves: true })).toMatchObject({ clustersPerArm: 4 });
    expect(runPowerDesign(run, { moves: true, atOnce: 3 })).toMatchObject({ clustersPerArm: 3 });
    expect(runPowerDesign(run, { moves: true, atOnce: 1 })).toMatchObject({
      kind: "separate",
      adaptiveAsFixed: expect.stringContaining("hold at most 1 at once (raise maxClusters)"),
    });
  });

  it("runs a crossover to an older PR payload as the fixed run it runs, since a cluster is never rolled back", () => {
    const older = {
      ...adaptiveCrossover(200),
      payloads: {
        pr: PR_PAYLOAD,
        baseline: RELEASED,
        names: { pr: "4.21.9", baseline: "4.22.0-0.nightly-2026-12-01-123456" },
      },
    };
    expect(runPowerDesign(older, { moves: true })).toMatchObject({
      kind: "separate",
      adaptiveAsFixed:
        "a crossover by upgrade would move each cluster from the baseline payload to the PR payload: 4.21.9 is an older release than 4.22.0-0.nightly-2026-12-01-123456, and OpenShift does not roll a cluster back",
    });
    // A newer candidate, or a build of the same version from another stream, is crossed over.
    for (const pr of ["4.22.1", "4.22.0-0.ci.test-2026-12-02-000000-ci-op-abc-latest"])
      expect(
        runPowerDesign(
          { ...older, payloads: { ...older.payloads, names: { ...older.payloads.names, pr } } },
          {
            moves: true,
          },
        ),
      ).toMatchObject({ kind: "adaptive", batchesOn: "crossover" });
  });

  it("says nothing where the planner's model does not hold", () => {
    const both = plan(["pr", "baseline"]);
    // The clusters a run's iterations meet are unknown without a cluster source.
    expect(runPowerDesign(runRecord({ plan: both }), undefined)).toBeUndefined();
    // PR only, the pooled history (no clusters), upgrade runs (judged by disruption).
    expect(runPowerDesign(runRecord({ plan: plan(["pr"]) }), { moves: false })).toBeUndefined();
    expect(
      runPowerDesign(runRecord({ plan: both, options: { iterations: 5, baseline: "history" } }), {
        moves: false,
      }),
    ).toBeUndefined();
    expect(
      runPowerDesign(
        runRecord({ plan: both, options: { iterations: 5, baseline: "payload", upgradeFrom: "4.18" } }),
        { moves: false },
      ),
    ).toBeUndefined();
  });
});
