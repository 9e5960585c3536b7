import type { Queue } from "bullmq";
import type { CollectedGauges } from "./metrics.ts";

const STATES = ["waiting", "delayed", "active"] as const;

/** Queue depth by state and the age of the oldest waiting job, read from BullMQ when scraped. */
export async function collectQueueGauges(
  gauges: CollectedGauges,
  queues: readonly Queue[],
  now: () => number = Date.now,
): Promise<void> {
  await Promise.all(
    queues.map(async (queue) => {
      const [counts, oldest] = await Promise.all([queue.getJobCounts(...STATES), queue.getWaiting(0, 0)]);
      for (const state of STATES) gauges.queueJobs(queue.name, state, counts[state] ?? 0);
      const enqueued = oldest[0]?.timestamp;
      gauges.queueOldestWaitingSeconds(
        queue.name,
        enqueued === undefined ? 0 : Math.max(0, (now() - enqueued) / 1000),
      );
    }),
  );
}
