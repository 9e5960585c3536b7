import type { Logger } from "pino";
import type { PublishRun } from "../runs/run-publisher.ts";
import type { RunQueues } from "./run-queues.ts";
import type { RunStore } from "./run-store.ts";

/**
 * Telling a run's subject, made durable: a failed publish (GitHub down at the end of a run) never
 * fails the run or loses its conclusion. The run is marked unpublished and a publish job retries
 * with backoff until the subject takes the latest state; start-up queues every run still marked.
 */
export function createDurablePublisher(deps: {
  publish: PublishRun;
  store: Pick<RunStore, "get" | "markUnpublished" | "markPublished">;
  queues: Pick<RunQueues, "enqueuePublish">;
  log: Logger;
}): { publish: PublishRun; republish(runId: string): Promise<void> } {
  const { store, queues, log } = deps;
  return {
    async publish(run) {
      try {
        const published = await deps.publish(run);
        await store.markPublished(run.id);
        return published;
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
        await store.markPublished(runId);
        return;
      }
      await deps.publish(run);
      await store.markPublished(runId);
    },
  };
}
