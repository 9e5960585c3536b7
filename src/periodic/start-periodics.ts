import { Queue, Worker, type ConnectionOptions } from "bullmq";
import type { Logger } from "pino";
import type { Periodic, PeriodicsConfig } from "../config/periodics-config.ts";
import type { ReleaseController } from "../payload/release-controller.ts";
import type { RunDeps } from "../queue/run-deps.ts";
import { firePeriodic } from "./fire-periodic.ts";

export const PERIODIC_QUEUE = "periodic";

interface FireJob {
  name: string;
}

/**
 * Release periodics as BullMQ job schedulers: every replica upserts the same schedulers (one per
 * periodic, keyed by its name), and BullMQ makes each schedule fire once however many replicas run.
 * A restart neither skips a fire (the schedule lives in Redis) nor doubles a run (run ids derive
 * from periodic, arch and payload). Schedulers of periodics no longer configured are removed.
 */
export async function startPeriodics(options: {
  connection: ConnectionOptions;
  prefix: string;
  config: PeriodicsConfig;
  runs: RunDeps;
  releaseController: ReleaseController;
  log: Logger;
  /** Test seam: fire every `everyMs` instead of on each periodic's cron. */
  everyMs?: number;
}): Promise<{ close(): Promise<void> }> {
  const { connection, prefix, log } = options;
  const byName = new Map<string, Periodic>(options.config.periodics.map((p) => [p.name, p]));
  const queue = new Queue<FireJob>(PERIODIC_QUEUE, { connection, prefix });
  for (const periodic of byName.values()) {
    await queue.upsertJobScheduler(
      periodic.name,
      options.everyMs ? { every: options.everyMs } : { pattern: periodic.cron, tz: "UTC" },
      { name: "fire", data: { name: periodic.name }, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
  }
  // A scheduler's key is the id it was upserted with: the periodic's name.
  for (const { key } of await queue.getJobSchedulers()) {
    if (!byName.has(key)) await queue.removeJobScheduler(key);
  }
  const worker = new Worker<FireJob>(
    PERIODIC_QUEUE,
    async (job) => {
      const periodic = byName.get(job.data.name);
      if (!periodic) return;
      await firePeriodic({ runs: options.runs, releaseController: options.releaseController, log }, periodic);
    },
    { connection, prefix, concurrency: 1 },
  );
  worker.on("failed", (job, error) =>
    log.warn({ err: error, periodic: job?.data.name }, "periodic fire failed; the next fire tries again"),
  );
  worker.on("error", (err) => log.error({ err, queue: PERIODIC_QUEUE }, "periodic worker error"));
  return {
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
