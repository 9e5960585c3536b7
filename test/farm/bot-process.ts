// The bot's worker side as a process of its own, for the restart-safety tests: the real resolve
// and execute workers on BullMQ (run state machine, analysis, history) for PR and gate runs alike,
// the real farm executor with its start-up reconciliation (startFarm, then active runs re-queued as
// startBot does), and GitHub left out (the run record in Redis says everything the check run
// would). Run with: node --import tsx test/farm/bot-process.ts
import { Redis } from "ioredis";
import { pino } from "pino";
import { startFarm } from "../../src/farm/start-farm.ts";
import { createGatePublisher } from "../../src/gate/publish-gate-run.ts";
import { createGateStore } from "../../src/gate/gate-store.ts";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import { createAbortBus } from "../../src/queue/abort-bus.ts";
import type { RunDeps } from "../../src/queue/run-deps.ts";
import { createRunLiveness } from "../../src/queue/run-liveness.ts";
import { createRunQueues } from "../../src/queue/run-queues.ts";
import { requeueActiveRuns } from "../../src/queue/requeue-active-runs.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import { startWorkers } from "../../src/queue/start-workers.ts";
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
const gates = createGateStore({ redis, prefix });
const gatePublisher = createGatePublisher({ gates, runs: store });
const deps: RunDeps = {
  store,
  queues,
  abortBus: await createAbortBus({ redis, prefix }),
  // PR runs: the record in Redis says everything the check run would.
  publish: async (run) => (run.subject.kind === "gate" ? gatePublisher(run) : run),
  log,
};
const farm = await startFarm({
  configPath: env("BOT_FARM_CONFIG"),
  redisUrl,
  prefix,
  logger: log,
  streamSecret: env("BOT_STREAM_SECRET"),
  isRunActive: createRunLiveness(store),
  tuning: { apiTimeoutMs: 1500, watchIdleMs: 3000, pollMs: 200 },
});
await farm.reconcile();
await requeueActiveRuns({ runs: store, queues, logger: log });
startWorkers({
  connection: redis,
  prefix,
  deps,
  intake: async () => {},
  resolve: { executor: farm.executor, resolvePlan: async () => ({ kind: "ready", plan: PLAN }) },
  execute: {
    executor: farm.executor,
    analyze: createRunAnalyzer({ history: createHistoryStore({ redis, prefix }), log }),
    dataDir: env("BOT_DATA_DIR"),
    progressIntervalMs: 1000,
    testTimeoutMs: 60_000,
    retries: 0,
  },
  executeConcurrency: 16,
  // Short locks so that a killed worker's runs are found stalled within seconds, not a minute.
  tuning: { lockDuration: 3000, stalledInterval: 1000, maxStalledCount: 1000 },
});
process.stdout.write("ready\n");
