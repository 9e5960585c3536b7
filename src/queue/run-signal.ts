import type { AbortBus } from "./abort-bus.ts";
import { RunStopped } from "./run-stopped.ts";

export interface RunSignal {
  /** Aborts once, with a RunStopped reason: abort, deadline or shutdown, whichever came first. */
  signal: AbortSignal;
  /** The reason the run stopped; undefined while it runs. */
  stopped(): RunStopped | undefined;
  /** Stops listening (the deadline's timer, the abort bus, the shutdown signal). */
  dispose(): void;
}

/**
 * One signal for everything that stops a run's execution: an abort published for it on the abort
 * bus (by any process), its deadline, and this process' shutdown.
 */
export function runSignal(input: {
  abortBus: AbortBus;
  runId: string;
  /** When the run times out (epoch milliseconds). */
  deadline: number;
  shutdown?: AbortSignal;
}): RunSignal {
  const controller = new AbortController();
  const stop = (kind: RunStopped["kind"], message: string) => {
    if (!controller.signal.aborted) controller.abort(new RunStopped(kind, message));
  };
  // The abort bus aborts a controller with the abort's reason (a string).
  const aborts = new AbortController();
  aborts.signal.addEventListener(
    "abort",
    () => stop("aborted", String(aborts.signal.reason ?? "cancelled")),
    {
      once: true,
    },
  );
  const unregister = input.abortBus.register(input.runId, aborts);
  const onShutdown = () => stop("shutdown", "the bot is stopping");
  input.shutdown?.addEventListener("abort", onShutdown, { once: true });
  if (input.shutdown?.aborted) onShutdown();
  const timer = setTimeout(() => stop("timed out", "timed out"), Math.max(0, input.deadline - Date.now()));
  return {
    signal: controller.signal,
    stopped: () => (controller.signal.reason instanceof RunStopped ? controller.signal.reason : undefined),
    dispose() {
      clearTimeout(timer);
      unregister();
      input.shutdown?.removeEventListener("abort", onShutdown);
    },
  };
}
