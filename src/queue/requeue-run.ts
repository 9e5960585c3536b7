import type { RunRecord } from "../runs/run-record.ts";
import type { RunQueues } from "./run-queues.ts";

/**
 * Puts an active run on the queue of its stage: execute once planned, else resolve (after the wait
 * for images it is in). Job ids derive from run ids, so a run already queued, delayed or running is
 * left as it is: whoever is unsure whether a run's job was added may call it.
 */
export async function requeueRun(
  queues: Pick<RunQueues, "enqueueResolve" | "enqueueExecute">,
  run: RunRecord,
  now: Date,
): Promise<void> {
  if (run.plan) {
    await queues.enqueueExecute(run.id);
    return;
  }
  const next = run.imageWait ? Date.parse(run.imageWait.next) : now.getTime();
  await queues.enqueueResolve(run.id, {
    attempt: run.imageWait?.attempts ?? 0,
    delayMs: Math.max(0, next - now.getTime()),
  });
}
