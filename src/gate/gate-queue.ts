import { Queue, Worker, type ConnectionOptions, type WorkerOptions } from "bullmq";
import { handOverWhenInterrupted } from "../queue/hand-over-when-interrupted.ts";
import { MAX_STALLED_COUNT } from "../queue/run-queues.ts";
import type { Arch } from "../arch/arch.ts";
import { processGateArch, type GateWorkerDeps } from "./process-gate-arch.ts";

export const GATE_QUEUE_NAME = "gate";

export interface GateJob {
  gateId: string;
  arch: Arch;
}

export interface GateQueue {
  /** The BullMQ queue itself (its depth and age are metrics). */
  readonly queue: Queue<GateJob>;
  /** Queues one arch of a gate; queueing it again adds nothing. */
  enqueue(job: GateJob): Promise<void>;
  close(): Promise<void>;
}

/** The gate's BullMQ queue, under the prefix and on the Redis of the run queues. */
export function createGateQueue(options: { connection: ConnectionOptions; prefix: string }): GateQueue {
  const queue = new Queue<GateJob>(GATE_QUEUE_NAME, {
    connection: options.connection,
    prefix: options.prefix,
  });
  return {
    queue,
    async enqueue(job) {
      await queue.add("gate", job, {
        jobId: `${job.gateId}.${job.arch}`,
        removeOnComplete: { age: 24 * 3600, count: 1000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      });
    },
    close: () => queue.close(),
  };
}

/**
 * The gate worker: one job per gate and arch. On close, running arches stop and go back on the
 * queue for the next worker (farm Jobs keep running, to be adopted). A job BullMQ gives up on (its
 * worker died too often) still ends its arch, Inconclusive with the reason.
 */
export function startGateWorker(options: {
  connection: ConnectionOptions;
  prefix: string;
  deps: GateWorkerDeps;
  concurrency: number;
  /** Test seam: short locks, so that a killed worker's arches are found stalled within seconds. */
  tuning?: Pick<WorkerOptions, "lockDuration" | "stalledInterval" | "maxStalledCount">;
}): { close(): Promise<void> } {
  const shutdown = new AbortController();
  const deps = { ...options.deps, shutdown: shutdown.signal };
  const worker = new Worker<GateJob>(
    GATE_QUEUE_NAME,
    handOverWhenInterrupted((job) => processGateArch(deps, job.data)),
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      maxStalledCount: MAX_STALLED_COUNT,
      ...options.tuning,
    },
  );
  worker.on("failed", (job, error) => {
    if (!job) return;
    const { gateId, arch } = job.data;
    deps.log.error({ err: error, gateId, arch }, "gate job failed");
    deps.store
      .setArch(gateId, {
        arch,
        state: "completed",
        verdict: "Inconclusive",
        reasons: [`the bot could not run this arch: ${error.message}`],
        finishedAt: new Date().toISOString(),
      })
      .catch((err: unknown) => deps.log.error({ err, gateId, arch }, "could not end a failed gate arch"));
  });
  worker.on("error", (err) => deps.log.error({ err, queue: GATE_QUEUE_NAME }, "gate worker error"));
  return {
    async close() {
      shutdown.abort();
      await worker.close();
    },
  };
}
