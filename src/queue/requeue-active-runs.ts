import type { Logger } from "pino";
import type { RunQueues } from "./run-queues.ts";
import type { RunRecord } from "../runs/run-record.ts";
import { requeueRun } from "./requeue-run.ts";

/**
 * At start-up, puts every active run back on the queue of its stage: a run accepted or planned
 * whose queue job was never added (the process died in between) goes on now. Job ids derive from
 * run ids, so a run already queued, delayed or running is left as it is. A run whose deadline
 * passed while no bot was running concludes timed_out in its execute stage, its check run with it.
 * Every run still marked unpublished (any state) gets a publish job.
 */
export async function requeueActiveRuns(deps: {
  runs: { listActive(): Promise<RunRecord[]>; listUnpublished(): Promise<string[]> };
  queues: Pick<RunQueues, "enqueueResolve" | "enqueueExecute" | "enqueuePublish">;
  logger: Logger;
  now?: () => Date;
}): Promise<number> {
  const now = (deps.now ?? (() => new Date()))();
  const runs = await deps.runs.listActive();
  for (const run of runs) await requeueRun(deps.queues, run, now);
  // Runs whose subject was never told their latest state (GitHub was down) are told now.
  const unpublished = await deps.runs.listUnpublished();
  for (const id of unpublished) await deps.queues.enqueuePublish(id);
  deps.logger.info({ runs: runs.length, unpublished: unpublished.length }, "active runs re-queued");
  return runs.length;
}
