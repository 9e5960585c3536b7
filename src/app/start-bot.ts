import { randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { ProbotOctokit } from "probot";
import { Probot, Server } from "probot";
import type { BotSettings } from "../config/bot-settings.ts";
import { createLocalExecutor } from "../farm/local-executor.ts";
import type { ShardExecutor } from "../farm/shard-executor.ts";
import { createAbortBus } from "../queue/abort-bus.ts";
import { createGitHubWriteBudget } from "../queue/github-write-budget.ts";
import { createGateService } from "../gate/start-gate-service.ts";
import { loadGateSettings } from "../gate/gate-settings.ts";
import { createHistoryAnalyzer } from "../history/history-analyzer.ts";
import { loadHistorySettings } from "../history/history-settings.ts";
import { createHistoryStore } from "../history/history-store.ts";
import { collectQueueGauges } from "../observability/collect-queue-gauges.ts";
import { createLogger } from "../observability/create-logger.ts";
import { instrumentExecutor, instrumentOctokit, instrumentRunStore } from "../observability/instrument.ts";
import { createMetrics, type Metrics } from "../observability/metrics.ts";
import { observeWebhooks } from "../observability/observe-webhooks.ts";
import { createObservabilityRoutes } from "../observability/observability-routes.ts";
import { createRunActivity } from "../observability/run-activity.ts";
import { createPayloadPlanResolver } from "../queue/payload-plan-resolver.ts";
import type { ResolveRunPlan } from "../queue/plan-resolver.ts";
import type { AnalyzeRunResults } from "../queue/process-execute.ts";
import type { RunDeps } from "../queue/run-deps.ts";
import { createRunQueues } from "../queue/run-queues.ts";
import { requeueActiveRuns } from "../queue/requeue-active-runs.ts";
import { createRunStore } from "../queue/run-store.ts";
import { startWorkers, type Workers } from "../queue/start-workers.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import { createNetstressApp } from "./create-app.ts";
import { createHttpRoutes } from "./http-routes.ts";
import type { IntakeDeps } from "./intake-deps.ts";
import { processIntake } from "./process-intake.ts";

export interface StartBotOptions {
  settings: BotSettings;
  log?: Logger;
  /** Probot's Octokit class; tests pass one with throttling off. */
  Octokit?: typeof ProbotOctokit;
  /** The bot's metrics; pass them when other parts of the process (the farm) record too. */
  metrics?: Metrics;
  /** Where shards run; the embedded local executor by default. */
  executor?: ShardExecutor;
  resolvePlan?: ResolveRunPlan;
  analyze?: AnalyzeRunResults;
  progressIntervalMs?: number;
  imageWaitStepMs?: number;
}

export interface RunningBot {
  /** Where the bot listens (webhooks at settings.webhookPath). */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * `netstress serve`: the Probot server (webhooks, /healthz, /readyz, run pages) and, unless
 * settings.workers is false, the intake, resolve and execute workers in the same process. Probot
 * gets no Redis configuration; the queues have their own connection (NETSTRESS_REDIS_URL).
 */
export async function startBot(options: StartBotOptions): Promise<RunningBot> {
  const { settings } = options;
  const log = options.log ?? createLogger({ level: settings.logLevel });
  const dataDir = resolve(settings.dataDir);
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  await redis.connect();
  const prefix = settings.queuePrefix;
  const metrics = options.metrics ?? createMetrics();
  const activity = createRunActivity({ redis, prefix });
  const store = instrumentRunStore(createRunStore({ redis, prefix }), { metrics, activity });
  const history = createHistoryStore({ redis, prefix, ...loadHistorySettings() });
  const queues = createRunQueues({ connection: redis, prefix });
  const abortBus = await createAbortBus({ redis, prefix });
  const executor = instrumentExecutor(
    options.executor ??
      createLocalExecutor({ arches: settings.localArches, cacheDir: join(dataDir, "binaries") }),
    metrics,
  );
  const gate = createGateService({
    settings: loadGateSettings(),
    redis,
    prefix,
    dataDir,
    publicUrl: settings.publicUrl,
    history,
    executor,
    log,
  });
  metrics.onCollect(async (gauges) => {
    const bullQueues = [
      queues.intake,
      queues.resolve,
      queues.execute,
      ...(gate.queue ? [gate.queue.queue] : []),
    ];
    const [active] = await Promise.all([activity.activeByState(), collectQueueGauges(gauges, bullQueues)]);
    for (const [state, count] of active) gauges.activeRuns(state, count);
  });

  const ProbotWithSettings = Probot.defaults({
    appId: settings.appId,
    privateKey: settings.privateKey,
    secret: settings.webhookSecret,
    baseUrl: settings.githubBaseUrl,
    log,
    ...(options.Octokit ? { Octokit: options.Octokit } : {}),
  });
  const server = new Server({
    Probot: ProbotWithSettings,
    port: settings.port,
    host: settings.host,
    webhookPath: settings.webhookPath,
    log,
  });
  let probot: Probot | undefined;
  await server.load((app, appOptions) => {
    probot = app;
    createNetstressApp({
      appId: settings.appId,
      intake: {
        enqueue: async (event) => {
          await queues.intake.add(event.kind, event, {
            jobId: event.deliveryId,
            attempts: 3,
            backoff: { type: "exponential", delay: 2_000 },
            removeOnComplete: { age: 3600, count: 1000 },
            removeOnFail: { age: 7 * 24 * 3600 },
          });
        },
      },
    })(app, appOptions);
    appOptions.addHandler(
      createHttpRoutes({
        store,
        publicUrl: settings.publicUrl,
        ready: async () => (await redis.ping()) === "PONG",
      }),
    );
    appOptions.addHandler(createObservabilityRoutes({ metrics, activity, getRun: (id) => store.get(id) }));
    if (gate.routes) appOptions.addHandler(gate.routes);
  });

  const deps: IntakeDeps = {
    store,
    queues,
    budget: createGitHubWriteBudget({ redis, prefix }),
    abortBus,
    publicUrl: settings.publicUrl,
    githubFor: async (installationId) =>
      instrumentOctokit((await probot!.auth(installationId)) as GitHubClient, metrics, installationId),
    log,
    // Run ids are keyed with the webhook secret: stable for a delivery, unguessable without it.
    runIdSecret: settings.webhookSecret === "development" ? randomUUID() : settings.webhookSecret,
    trustedApps: settings.trustedApps,
    defaults: settings.defaults,
  };
  const runDeps: RunDeps = deps;
  let workers: Workers | undefined;
  if (settings.workers) {
    workers = startWorkers({
      connection: redis,
      prefix,
      deps: runDeps,
      intake: (job) => processIntake(deps, job.data),
      resolve: {
        executor,
        resolvePlan:
          options.resolvePlan ??
          createPayloadPlanResolver({
            cacheDir: join(dataDir, "cache"),
            ...(gate.releaseController ? { releaseController: gate.releaseController } : {}),
          }),
        ...(options.imageWaitStepMs !== undefined ? { imageWaitStepMs: options.imageWaitStepMs } : {}),
      },
      execute: {
        executor,
        analyze: options.analyze ?? createHistoryAnalyzer({ history, log }),
        dataDir,
        ...(options.progressIntervalMs !== undefined
          ? { progressIntervalMs: options.progressIntervalMs }
          : {}),
      },
      executeConcurrency: settings.runConcurrency,
    });
    gate.startWorker();
    // Runs whose queue job was never added (the process died in between) go on their way now.
    await requeueActiveRuns({ runs: store, queues, logger: log });
  }

  const http = await server.start();
  observeWebhooks({ server: http, webhookPath: settings.webhookPath, metrics });
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  log.info({ port, workers: settings.workers, executor: executor.name }, "netstress bot listening");
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      await server.stop();
      await workers?.close();
      await gate.close();
      await queues.close();
      await abortBus.close();
      await redis.quit();
    },
  };
}
