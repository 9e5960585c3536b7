import type { Logger } from "pino";
import type { RunEvent } from "../runs/run-events.ts";
import type { PublishRun } from "../runs/run-publisher.ts";
import type { RunRecord } from "../runs/run-record.ts";
import type { AbortBus } from "./abort-bus.ts";
import type { RunQueues } from "./run-queues.ts";
import type { RunStore } from "./run-store.ts";

/** What the workers (and the triggers that start runs) share to change runs and tell whom it concerns. */
export interface RunDeps {
  store: RunStore;
  queues: RunQueues;
  abortBus: AbortBus;
  /** Tells the run's subject (its check run, its gate) what the stored run now says. */
  publish: PublishRun;
  log: Logger;
}

/** The deps of one run's stage: its logs carry the run id and what asked for it. */
export function runScoped(deps: RunDeps, run: RunRecord): RunDeps {
  const { subject } = run;
  const origin =
    subject.kind === "pr"
      ? { deliveryId: subject.trigger.deliveryId }
      : subject.kind === "gate"
        ? { gateId: subject.gateId }
        : { periodic: subject.periodic, release: subject.release };
  return { ...deps, log: deps.log.child({ runId: run.id, ...origin }) };
}

/** Applies an event and, when it changed the run, tells the run's subject. */
export async function applyAndPublish(
  deps: RunDeps,
  runId: string,
  event: RunEvent,
): Promise<RunRecord | undefined> {
  const run = await deps.store.apply(runId, event);
  if (run) await deps.publish(run);
  return run;
}
