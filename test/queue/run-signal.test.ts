import { describe, expect, it } from "vitest";
import type { AbortBus } from "../../src/queue/abort-bus.ts";
import { runSignal } from "../../src/queue/run-signal.ts";

/** An abort bus of this process alone: publish aborts the registered controllers of the run. */
function localAbortBus(): AbortBus {
  const controllers = new Map<string, Set<AbortController>>();
  return {
    async publish(runId, reason) {
      for (const controller of controllers.get(runId) ?? []) controller.abort(reason);
    },
    register(runId, controller) {
      const set = controllers.get(runId) ?? new Set<AbortController>();
      controllers.set(runId, set.add(controller));
      return () => set.delete(controller);
    },
    async close() {},
  };
}

const LATER = () => Date.now() + 3_600_000;

describe("a run's signal", () => {
  it("says which of abort, deadline and shutdown stopped the run, with the message executors tell", async () => {
    const bus = localAbortBus();
    const aborted = runSignal({ abortBus: bus, runId: "a", deadline: LATER() });
    await bus.publish("a", "aborted by @alice");
    expect(aborted.signal.aborted).toBe(true);
    expect(aborted.stopped()).toMatchObject({ kind: "aborted", message: "aborted by @alice" });

    const late = runSignal({ abortBus: bus, runId: "b", deadline: Date.now() - 1 });
    await new Promise((resolve) => late.signal.addEventListener("abort", resolve, { once: true }));
    expect(late.stopped()).toMatchObject({ kind: "timed out", message: "timed out" });

    const shutdown = new AbortController();
    shutdown.abort();
    const stopping = runSignal({ abortBus: bus, runId: "c", deadline: LATER(), shutdown: shutdown.signal });
    expect(stopping.stopped()).toMatchObject({ kind: "shutdown", message: "the bot is stopping" });
    for (const s of [aborted, late, stopping]) s.dispose();
  });

  it("keeps the first reason: a run aborted before the bot stops is cancelled, not handed over", async () => {
    const bus = localAbortBus();
    const shutdown = new AbortController();
    const signal = runSignal({ abortBus: bus, runId: "r", deadline: LATER(), shutdown: shutdown.signal });
    await bus.publish("r", "superseded by 0123abc");
    shutdown.abort();
    expect(signal.stopped()).toMatchObject({ kind: "aborted", message: "superseded by 0123abc" });
    signal.dispose();
  });

  it("stops listening once disposed: a later abort of the run leaves it untouched", async () => {
    const bus = localAbortBus();
    const signal = runSignal({ abortBus: bus, runId: "r", deadline: LATER() });
    signal.dispose();
    await bus.publish("r", "aborted by @alice");
    expect(signal.signal.aborted).toBe(false);
  });
});
