import { Worker, type ConnectionOptions, type Job, type WorkerOptions } from "bullmq";
import { handOverWhenInterrupted } from "./hand-over-when-interrupted.ts";
import type { ExecuteStageOptions } from "./execute-context.ts";
import { processExecute } from "./process-execute.ts";
import { processResolve, type ResolveStageOptions } from "./process-resolve.ts";
import { applyAndPublish, type RunDeps } from "./run-deps.ts";
import { MAX_STALLED_COUNT, QUEUE_NAMES, type ResolveJob } from "./run-queues.ts";

export interface Workers {
  close(): Promise<void>;
}

/**
 * The bot's BullMQ workers: intake (authorize and act on webhook events), and resolve and execute
 * for runs of every subject. A run job that BullMQ gives up on (its worker died too often) still
 * concludes, and its subject is told.
 */
export function startWorkers(options: {
  connection: ConnectionOptions;
  prefix: string;
  deps: RunDeps;
  intake: (job: Job) => Promise<void>;
  resolve: ResolveStageOptions;
  execute: ExecuteStageOptions;
  /** Tells a run's subject its state again (runs whose publish failed); absent: no publish worker. */
  republish?: (runId: string) => Promise<void>;
  /** Runs executing at once in this process. */
  executeConcurrency: number;
  /** Test seam: short locks, so that a killed worker's runs are found stalled within seconds. */
  tuning?: Pick<WorkerOptions, "lockDuration" | "stalledInterval" | "maxStalledCount">;
}): Workers {
  const { deps } = options;
  const shutdown = new AbortController();
  const execute = { ...options.execute, shutdown: shutdown.signal };
  const common = { connection: options.connection, prefix: options.prefix };
  const concludeFailed = (stage: string) => (job: Job<ResolveJob> | undefined, error: Error) => {
    if (!job) return;
    deps.log.error({ err: error, runId: job.data.runId }, `${stage} job failed`);
    applyAndPublish(deps, job.data.runId, {
      type: "concluded",
      conclusion: "failure",
      reason: `the bot could not ${stage} this run: ${error.message}`,
    }).catch((err: unknown) =>
      deps.log.error({ err, runId: job.data.runId }, "could not conclude a failed run"),
    );
  };
  const workers = [
    new Worker(QUEUE_NAMES.intake, options.intake, { ...common, concurrency: 8 }),
    new Worker<ResolveJob>(
      QUEUE_NAMES.resolve,
      (job) => processResolve(deps, options.resolve, job.data.runId),
      {
        ...common,
        concurrency: 4,
      },
    ).on("failed", concludeFailed("resolve")),
    new Worker<ResolveJob>(
      QUEUE_NAMES.execute,
      handOverWhenInterrupted((job) => processExecute(deps, execute, job.data.runId)),
      {
        ...common,
        concurrency: options.executeConcurrency,
        maxStalledCount: MAX_STALLED_COUNT,
        ...options.tuning,
      },
    ).on("failed", concludeFailed("execute")),
    ...(options.republish
      ? [
          new Worker<ResolveJob>(QUEUE_NAMES.publish, (job) => options.republish!(job.data.runId), {
            ...common,
            concurrency: 4,
          }).on("failed", (job, error) => {
            if (job && job.attemptsMade >= (job.opts.attempts ?? 1))
              deps.log.error(
                { err: error, runId: job.data.runId },
                "run still unpublished after every retry; the next start-up tries again",
              );
          }),
        ]
      : []),
  ];
  for (const worker of workers) {
    worker.on("error", (err) => deps.log.error({ err, queue: worker.name }, "queue worker error"));
  }
  return {
    async close() {
      // Running executions stop now; their jobs resume on the next worker (see processExecute).
      shutdown.abort();
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
