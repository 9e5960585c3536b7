import { describe, expect, it } from "vitest";
import { checkRunView } from "../../src/github/check-run-view.ts";
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
});
