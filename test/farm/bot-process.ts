// The bot's worker side as a process of its own, for the restart-safety tests: the real execute
// stage (processExecute: run state machine, analysis) and gate worker on BullMQ, the real farm
// executor with its start-up reconciliation (startFarm, then active runs re-queued as startBot
// does), and GitHub replaced by a stub (the run record in Redis says everything the check run
// would). Run with: node --import tsx test/farm/bot-process.ts
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { startFarm } from "../../src/farm/start-farm.ts";
import { startGateWorker } from "../../src/gate/gate-queue.ts";
import { createGateStore } from "../../src/gate/gate-store.ts";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createAbortBus } from "../../src/queue/abort-bus.ts";
import { processExecute } from "../../src/queue/process-execute.ts";
import { analyzeWithReports } from "../../src/queue/report-analyzer.ts";
import type { RunDeps } from "../../src/queue/run-deps.ts";
import { createRunQueues, QUEUE_NAMES, type ExecuteJob } from "../../src/queue/run-queues.ts";
import { requeueActiveRuns } from "../../src/queue/requeue-active-runs.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import type { GitHubClient } from "../../src/trust/github-client.ts";
import { PLAN } from "./farm-fixture.ts";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const redisUrl = env("BOT_REDIS_URL");
const prefix = env("BOT_PREFIX");
const log = pino({ level: process.env.BOT_LOG_LEVEL ?? "warn" });

const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
redis.on("error", (err: Error) => log.warn({ err: err.message }, "redis"));
const store = createRunStore({ redis, prefix });
const queues = createRunQueues({ connection: redis, prefix });
const checks = { create: async () => ({ data: { id: 1 } }), update: async () => ({ data: {} }) };
const deps: RunDeps = {
  store,
  queues,
  budget: { acquire: async () => {}, pause: async () => {} },
  abortBus: await createAbortBus({ redis, prefix }),
  publicUrl: "http://127.0.0.1:1",
  githubFor: async () => ({ rest: { checks } }) as unknown as GitHubClient,
  log,
};
const farm = await startFarm({
  configPath: env("BOT_FARM_CONFIG"),
  redisUrl,
  prefix,
  logger: log,
  tuning: { apiTimeoutMs: 1500, watchIdleMs: 3000, pollMs: 200 },
});
await farm.reconcile();
await requeueActiveRuns({ runs: store, queues, logger: log });
// Short locks so that a killed worker's runs are found stalled within seconds, not a minute.
new Worker<ExecuteJob>(
  QUEUE_NAMES.execute,
  async (job) => {
    await processExecute(
      deps,
      {
        executor: farm.executor,
        analyze: analyzeWithReports,
        dataDir: env("BOT_DATA_DIR"),
        progressIntervalMs: 1000,
        testTimeoutMs: 60_000,
        retries: 0,
      },
      job.data.runId,
    );
  },
  {
    connection: redis,
    prefix,
    concurrency: 16,
    lockDuration: 3000,
    stalledInterval: 1000,
    maxStalledCount: 1000,
  },
).on("error", (err) => log.warn({ err }, "worker error"));
startGateWorker({
  connection: redis,
  prefix,
  concurrency: 4,
  deps: {
    store: createGateStore({ redis, prefix }),
    history: createHistoryStore({ redis, prefix }),
    executor: farm.executor,
    resolvePlan: async () => PLAN,
    dataDir: env("BOT_DATA_DIR"),
    publicUrl: "http://127.0.0.1:1",
    parallel: 2,
    timeoutMinutes: 30,
    testTimeoutMs: 60_000,
    retries: 0,
    progressIntervalMs: 1000,
    log,
  },
  tuning: { lockDuration: 3000, stalledInterval: 1000, maxStalledCount: 1000 },
});
process.stdout.write("ready\n");
