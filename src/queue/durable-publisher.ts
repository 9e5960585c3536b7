import type { Logger } from "pino";
import type { PublishRun } from "../runs/run-publisher.ts";
import type { RunRecord } from "../runs/run-record.ts";
import type { RunQueues } from "./run-queues.ts";
import type { RunStore } from "./run-store.ts";

/**
 * Telling a run's subject, made durable: a failed publish (GitHub down at the end of a run) never
 * fails the run or loses its conclusion. The run is marked unpublished and a publish job retries
 * with backoff until the subject takes the latest state; start-up queues every run still marked.
 *
 * The subject is told the record it is handed. Two processes may publish one run at once (an abort
 * while progress is reported), so unmarking the run also says whether it moved on meanwhile, and a
 * newer record is told too: the last state a subject hears is always the newest, and a concluded
 * run never appears to be running again.
 */
export function createDurablePublisher(deps: {
  publish: PublishRun;
  store: Pick<RunStore, "get" | "markUnpublished" | "markPublished">;
  queues: Pick<RunQueues, "enqueuePublish">;
  log: Logger;
}): { publish: PublishRun; republish(runId: string): Promise<void> } {
  const { store, queues, log } = deps;
  /** Tells the subject the run, and any newer record of it, until it heard the newest. */
  const tell = async (run: RunRecord): Promise<RunRecord> => {
    for (let told = run; ;) {
      const published = (await deps.publish(told)) ?? told;
      const newer = await store.markPublished(published);
      if (!newer) return published;
      told = newer;
    }
  };
  return {
    async publish(run) {
      try {
        return await tell(run);
      } catch (error) {
        log.warn({ err: error, runId: run.id }, "run not published; retrying in the background");
        await store.markUnpublished(run.id);
        await queues.enqueuePublish(run.id, { delayMs: 5_000 });
        return run;
      }
    },
    /** The publish job: tells the subject the run's state now; throws (to be retried) while it fails. */
    async republish(runId) {
      const run = await store.get(runId);
      if (!run) {
        // Nothing is left to tell: a gone record is unmarked whatever the revision.
        await store.markPublished({ id: runId, revision: -1 });
        return;
      }
      await tell(run);
    },
  };
}
