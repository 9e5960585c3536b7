import { describe, expect, it } from "vitest";
import { applyRunEvent, type RunEvent } from "../../src/runs/run-events.ts";
import type { RunRecord, RunState } from "../../src/runs/run-record.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { sharedClustersBatch } from "../helpers/shared-clusters-batch.ts";

const at = new Date("2026-01-01T00:00:00Z");
const plan = {
  arch: "amd64" as const,
  arms: [{ arm: "pr" as const, components: [{ component: "sdn", binary: "/b" }] }],
};

function walk(run: RunRecord, ...events: RunEvent[]): RunRecord | undefined {
  let current: RunRecord | undefined = run;
  for (const event of events) current = current && applyRunEvent(current, event, at);
  return current;
}

describe("the run state machine", () => {
  it("goes queued → running → analyzing → completed, counting revisions", () => {
    const done = walk(
      runRecord(),
      { type: "planned", plan },
      { type: "started" },
      { type: "progress", progress: { done: 1, total: 2, failed: 0 } },
      { type: "results-finished", results: { id: "amd64-0-4", resultsPath: "/r", first: 0, count: 5 } },
      { type: "analyzing" },
      {
        type: "analyzed",
        conclusion: "success",
        output: { title: "ok", summary: "fine" },
        reportPath: "/r.html",
      },
    );
    expect(done).toMatchObject({
      state: "completed",
      conclusion: "success",
      revision: 6,
      startedAt: at.toISOString(),
      finishedAt: at.toISOString(),
      results: [{ id: "amd64-0-4" }],
    });
  });

  it("concludes once: a late event or a second conclusion changes nothing", () => {
    const cancelled = walk(
      runRecord(),
      { type: "started" },
      { type: "concluded", conclusion: "cancelled", reason: "aborted by @bob" },
    )!;
    for (const event of [
      { type: "concluded", conclusion: "success" },
      { type: "progress", progress: { done: 2, total: 2, failed: 0 } },
      { type: "started" },
      { type: "analyzing" },
    ] as RunEvent[]) {
      expect(applyRunEvent(cancelled, event, at)).toBeUndefined();
    }
  });

  it.each<[RunState, RunEvent["type"]]>([
    ["queued", "progress"],
    ["queued", "analyzing"],
    ["waiting-for-images", "started"],
    ["running", "planned"],
  ])("refuses %s + %s", (state, type) => {
    const event = { type, plan, progress: { done: 0, total: 0, failed: 0 } } as RunEvent;
    expect(applyRunEvent(runRecord({ state }), event, at)).toBeUndefined();
  });

  it("lets a restarted worker start a running or analyzing run again, keeping when it started", () => {
    const started = walk(runRecord(), { type: "started" })!;
    const later = new Date("2026-01-01T01:00:00Z");
    expect(applyRunEvent({ ...started, state: "analyzing" }, { type: "started" }, later)).toMatchObject({
      state: "running",
      startedAt: at.toISOString(),
    });
  });

  it("keeps the first wait time and counts the looks while PR images are missing", () => {
    const next = new Date("2026-01-01T00:05:00Z");
    const waiting = walk(
      runRecord(),
      { type: "images-pending", missing: ["quay.io/a:1"], since: at, next },
      { type: "images-pending", missing: ["quay.io/a:1"], since: next, next },
    );
    expect(waiting).toMatchObject({
      state: "waiting-for-images",
      imageWait: { since: at.toISOString(), attempts: 2, missing: ["quay.io/a:1"], next: next.toISOString() },
    });
    expect(walk(waiting!, { type: "planned", plan })!.state).toBe("queued");
  });

  it("counts a new batch's executions from none: the last batch's count is not shown under its label", () => {
    const running = walk(
      { ...runRecord(), adaptive: { design: "shared clusters", batches: [sharedClustersBatch(0)] } },
      { type: "started" },
      { type: "progress", progress: { done: 50, total: 120, failed: 8 } },
    )!;
    expect(running.progress).toEqual({ done: 50, total: 120, failed: 8 });
    const next = walk(running, {
      type: "batch-planned",
      design: "shared clusters",
      batch: sharedClustersBatch(6),
    })!;
    expect(next.progress).toBeUndefined();
  });

  it("keeps a crossover batch's upgrades in flight only until its halves run, the run starts again or concludes", () => {
    const crossover = walk(
      { ...runRecord(), adaptive: { design: "crossover by upgrade", batches: [] } },
      { type: "started" },
      { type: "upgrades-started", batch: 2, clusters: ["c-0", "c-1"] },
      {
        type: "cluster-upgraded",
        upgrade: { id: "c-1", startedAt: at.toISOString(), finishedAt: at.toISOString(), failed: "refused" },
      },
    )!;
    expect(crossover.adaptive!.upgrading).toEqual({
      batch: 2,
      since: at.toISOString(),
      clusters: [
        { id: "c-0", state: "upgrading" },
        { id: "c-1", state: "failed" },
      ],
    });
    for (const event of [
      { type: "upgrades-ended" },
      { type: "started" },
      { type: "concluded", conclusion: "cancelled", reason: "aborted by @bob" },
    ] as RunEvent[]) {
      expect(walk(crossover, event)!.adaptive!.upgrading).toBeUndefined();
    }
    // Nothing in flight: nothing to end.
    expect(walk(crossover, { type: "upgrades-ended" }, { type: "upgrades-ended" })).toBeUndefined();
  });
});
