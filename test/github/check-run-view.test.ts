import { describe, expect, it } from "vitest";
import { CHECK_RUN_ACTIONS, checkRunView } from "../../src/github/check-run-view.ts";
import { runRecord } from "../helpers/github-run-deps.ts";

const publicUrl = "https://stress.example.com";
const plan = {
  arch: "amd64" as const,
  arms: [
    {
      arm: "pr" as const,
      components: [
        {
          component: "ovn-kubernetes",
          binary: "/b",
          source: "override" as const,
          image: "quay.io/pr:1",
          commit: "b7c1e0f5a4d3c2b1a0f9",
        },
      ],
    },
  ],
};

describe("checkRunView", () => {
  it("names the check run by arch and links to the run page", () => {
    const run = runRecord();
    expect(checkRunView(run, { publicUrl })).toMatchObject({
      name: "network-stress (amd64)",
      external_id: run.id,
      details_url: `${publicUrl}/runs/${run.id}`,
      status: "queued",
      output: { title: "Queued — 5 iterations, vs released payload (amd64)" },
      actions: [{ identifier: "abort" }],
    });
  });

  it("shows the plan once resolved, and progress while running", () => {
    const view = checkRunView(
      runRecord({
        state: "running",
        plan,
        progress: { done: 12, total: 40, failed: 3 },
        startedAt: "2026-01-01T00:00:00Z",
      }),
      { publicUrl },
    );
    expect(view).toMatchObject({ status: "in_progress", started_at: "2026-01-01T00:00:00Z" });
    expect(view.output.title).toBe("Running — 12/40 executions, 3 failed (amd64)");
    expect(view.output.summary).toContain(
      "| pr | ovn-kubernetes | override | `quay.io/pr:1` | `b7c1e0f5a4d3` |",
    );
  });

  it("shows the missing images while waiting for them", () => {
    const view = checkRunView(
      runRecord({
        state: "waiting-for-images",
        imageWait: {
          since: "2026-01-01T00:00:00Z",
          attempts: 3,
          missing: ["quay.io/ci/pr:ovn"],
          next: "2026-01-01T00:04:00Z",
        },
      }),
      { publicUrl },
    );
    expect(view.status).toBe("queued");
    expect(view.output.title).toBe("Waiting for PR images (amd64)");
    expect(view.output.summary).toContain("- `quay.io/ci/pr:ovn`");
    expect(view.output.summary).toContain("Checked 3 time(s)");
  });

  it("concludes with the reason when there is no analysis, and offers Re-run only", () => {
    const view = checkRunView(
      runRecord({
        state: "completed",
        conclusion: "timed_out",
        reason: "the run took longer than 60 minutes",
        finishedAt: "2026-01-01T01:00:00Z",
      }),
      { publicUrl },
    );
    expect(view).toMatchObject({
      status: "completed",
      conclusion: "timed_out",
      completed_at: "2026-01-01T01:00:00Z",
      output: { title: "Timed out — the run took longer than 60 minutes" },
      actions: [{ identifier: "rerun" }],
    });
    expect(view.output.summary.startsWith("**the run took longer than 60 minutes**")).toBe(true);
  });

  it("keeps analysis output within GitHub's limits and buttons within theirs", () => {
    const long = "x".repeat(70_000);
    const view = checkRunView(
      runRecord({
        state: "completed",
        conclusion: "failure",
        output: { title: "1 regression", summary: long, text: long },
      }),
      { publicUrl },
    );
    expect(view.output.summary.length).toBeLessThanOrEqual(65_535);
    expect(view.output.text!.length).toBeLessThanOrEqual(65_535);
    expect(view.output.summary.endsWith("see the full report)")).toBe(true);
    expect(view.actions.map((a) => a.identifier)).toEqual(["rerun", "more"]);
    for (const action of view.actions) {
      expect(action.label.length).toBeLessThanOrEqual(20);
      expect(action.description.length).toBeLessThanOrEqual(40);
      expect(action.identifier.length).toBeLessThanOrEqual(20);
    }
  });

  it("offers Run until decided only to an adaptive run that spent its budget undecided, and names its batch while it runs", () => {
    const decision = (stopped: "all tests decided" | "budget spent") => ({
      tests: [],
      stopped,
      spent: 120,
      target: { from: 0.02, to: 0.1 },
      method: "e-processes",
    });
    const batches = [
      { shardId: "amd64-0-5", first: 0, count: 6, clusters: 3, iterationsPerCluster: 2 },
      { shardId: "amd64-6-11", first: 6, count: 6, tests: ["a", "b"], clusters: 3, iterationsPerCluster: 2 },
    ];
    const finished = (stopped: "all tests decided" | "budget spent") =>
      checkRunView(
        runRecord({
          state: "completed",
          conclusion: "neutral",
          adaptive: { design: "shared clusters", batches, decision: decision(stopped) },
        }),
        { publicUrl },
      ).actions.map((a) => a.label);
    expect(finished("budget spent")).toEqual(["Re-run", "Run until decided"]);
    expect(finished("all tests decided")).toEqual(["Re-run"]);
    expect(
      checkRunView(runRecord({ state: "completed", conclusion: "neutral" }), { publicUrl }).actions.map(
        (a) => a.label,
      ),
    ).toEqual(["Re-run", "Run 10 more"]);
    // GitHub refuses a button whose label is over 20 characters or description over 40.
    for (const action of [CHECK_RUN_ACTIONS.continue, CHECK_RUN_ACTIONS.more]) {
      expect(action.label.length).toBeLessThanOrEqual(20);
      expect(action.description.length).toBeLessThanOrEqual(40);
    }
    const running = checkRunView(
      runRecord({
        state: "running",
        progress: { done: 3, total: 24, failed: 0 },
        adaptive: { design: "shared clusters", batches },
      }),
      { publicUrl },
    );
    expect(running.output.summary).not.toMatch(/mode/);
    const queued = checkRunView(
      runRecord({
        source: {
          ...runRecord().source,
          adaptive: { target: { from: 0.02, to: 0.1 }, budgetIterations: 30 },
        },
      }),
      { publicUrl },
    );
    expect(queued.output.summary).toContain(
      "| mode | adaptive: until every test is decided at 0.02:0.1, at most the executions of 30 iterations |",
    );
    expect(running.output.title).toBe(
      "Running — batch 2, 2 undecided test(s): 3/24 executions, 0 failed (amd64)",
    );
    // A batch that has reported nothing yet says so, under its own label.
    const starting = checkRunView(
      runRecord({ state: "running", adaptive: { design: "shared clusters", batches } }),
      { publicUrl },
    );
    expect(starting.output.title).toBe("Running — batch 2, 2 undecided test(s): starting (amd64)");
  });
});
