import { Queue, Worker, type ConnectionOptions } from "bullmq";
import type { Logger } from "pino";
import { loadPeriodicsConfig, type Periodic, type PeriodicsConfig } from "../config/periodics-config.ts";
import { watchSettingsFile } from "../config/watch-settings-file.ts";
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
 * With `watch`, the configuration file (NETSTRESS_PERIODICS_CONFIG) is reloaded when it changes,
 * like the farm's: a broken edit is logged once and the last good configuration stays in force.
 */
export async function startPeriodics(options: {
  connection: ConnectionOptions;
  prefix: string;
  config: PeriodicsConfig;
  watch?: { path: string; intervalMs?: number };
  runs: RunDeps;
  releaseController: ReleaseController;
  log: Logger;
  /** Test seam: fire every `everyMs` instead of on each periodic's cron. */
  everyMs?: number;
}): Promise<{ close(): Promise<void> }> {
  const { connection, prefix, log } = options;
  let byName = new Map<string, Periodic>();
  const queue = new Queue<FireJob>(PERIODIC_QUEUE, { connection, prefix });
  // New periodics get a scheduler, changed ones an updated one, periodics no longer configured none.
  const update = async (config: PeriodicsConfig) => {
    const next = new Map(config.periodics.map((p) => [p.name, p]));
    // The worker reads the new settings (iterations, arches …) from the next fire on.
    byName = next;
    for (const periodic of next.values()) {
      await queue.upsertJobScheduler(
        periodic.name,
        options.everyMs ? { every: options.everyMs } : { pattern: periodic.cron, tz: "UTC" },
        { name: "fire", data: { name: periodic.name }, opts: { removeOnComplete: 100, removeOnFail: 100 } },
      );
    }
    // A scheduler's key is the id it was upserted with: the periodic's name.
    for (const { key } of await queue.getJobSchedulers()) {
      if (!next.has(key)) await queue.removeJobScheduler(key);
    }
  };
  await update(options.config);
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
  const source = options.watch
    ? await watchSettingsFile({
        path: options.watch.path,
        load: loadPeriodicsConfig,
        what: "periodics configuration",
        logger: log,
        initial: options.config,
        onChange: update,
        ...(options.watch.intervalMs !== undefined ? { intervalMs: options.watch.intervalMs } : {}),
      })
    : undefined;
  return {
    async close() {
      source?.stop();
      await worker.close();
      await queue.close();
    },
  };
}
