import { Queue, type ConnectionOptions } from "bullmq";

/**
 * How often a run's execution may lose its worker — SIGKILL, OOM kill,
 * lost node — and still resume, before BullMQ gives up and the run concludes. BullMQ's
 * default, 1, would end a run on its second crash; a rollout that stops workers gracefully hands
 * the job over without counting.
 */
export const MAX_STALLED_COUNT = 5;

export const QUEUE_NAMES = {
  /** Webhook events that passed the handler, waiting to be authorized and acted on. */
  intake: "intake",
  /** Runs waiting for plan resolution (and for the PR's images). */
  resolve: "resolve",
  /** Runs ready to execute. */
  execute: "execute",
  /** Runs whose subject must be told their state again (a publish failed). */
  publish: "publish",
} as const;

export interface ResolveJob {
  runId: string;
}
export type ExecuteJob = ResolveJob;
export type PublishJob = ResolveJob;

export interface RunQueues {
  intake: Queue;
  resolve: Queue<ResolveJob>;
  execute: Queue<ExecuteJob>;
  publish: Queue<PublishJob>;
  /** Queues the run for resolution; `attempt` > 0 is a later look for the PR's images. */
  enqueueResolve(runId: string, options?: { attempt?: number; delayMs?: number }): Promise<void>;
  enqueueExecute(runId: string): Promise<void>;
  /**
   * Queues telling the run's subject its current state, retried with backoff for hours (GitHub
   * outages end); one job per run at a time, whatever state it has reached by then.
   */
  enqueuePublish(runId: string, options?: { delayMs?: number }): Promise<void>;
  close(): Promise<void>;
}

const KEEP = { removeOnComplete: { age: 24 * 3600, count: 1000 }, removeOnFail: { age: 7 * 24 * 3600 } };

/**
 * The bot's BullMQ queues under one prefix. Job ids derive from run ids, so queueing the same run
 * twice (a retried intake, a redelivered webhook) adds nothing.
 */
export function createRunQueues(options: { connection: ConnectionOptions; prefix: string }): RunQueues {
  const common = { connection: options.connection, prefix: options.prefix };
  const intake = new Queue(QUEUE_NAMES.intake, common);
  const resolve = new Queue<ResolveJob>(QUEUE_NAMES.resolve, common);
  const execute = new Queue<ExecuteJob>(QUEUE_NAMES.execute, common);
  const publish = new Queue<PublishJob>(QUEUE_NAMES.publish, common);
  return {
    intake,
    resolve,
    execute,
    publish,
    async enqueueResolve(runId, { attempt = 0, delayMs = 0 } = {}) {
      await resolve.add("resolve", { runId }, { ...KEEP, jobId: `${runId}.${attempt}`, delay: delayMs });
    },
    async enqueueExecute(runId) {
      await execute.add("execute", { runId }, { ...KEEP, jobId: runId });
    },
    async enqueuePublish(runId, { delayMs = 0 } = {}) {
      await publish.add(
        "publish",
        { runId },
        {
          jobId: `publish.${runId}`,
          delay: delayMs,
          // 5 s doubling: the last of 14 tries comes about 11 hours after the first failure.
          attempts: 14,
          backoff: { type: "exponential", delay: 5_000 },
          removeOnComplete: true,
          removeOnFail: { age: 7 * 24 * 3600 },
        },
      );
    },
    async close() {
      await Promise.all([intake.close(), resolve.close(), execute.close(), publish.close()]);
    },
  };
}
