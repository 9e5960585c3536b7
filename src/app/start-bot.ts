import { randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { pino, type Logger } from "pino";
import type { ProbotOctokit } from "probot";
import { Probot, Server } from "probot";
import type { BotSettings } from "../config/bot-settings.ts";
import { createLocalExecutor } from "../farm/local-executor.ts";
import type { ShardExecutor } from "../farm/shard-executor.ts";
import { createAbortBus } from "../queue/abort-bus.ts";
import { createGitHubWriteBudget } from "../queue/github-write-budget.ts";
import { createPayloadPlanResolver } from "../queue/payload-plan-resolver.ts";
import type { ResolveRunPlan } from "../queue/plan-resolver.ts";
import type { AnalyzeRunResults } from "../queue/process-execute.ts";
import { analyzeWithReports } from "../queue/report-analyzer.ts";
import type { RunDeps } from "../queue/run-deps.ts";
import { createRunQueues } from "../queue/run-queues.ts";
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
  const log = options.log ?? pino({ level: settings.logLevel, name: "netstress" });
  const dataDir = resolve(settings.dataDir);
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  await redis.connect();
  const prefix = settings.queuePrefix;
  const store = createRunStore({ redis, prefix });
  const queues = createRunQueues({ connection: redis, prefix });
  const abortBus = await createAbortBus({ redis, prefix });

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
        claimDelivery: (id) => store.claimDelivery(id),
        releaseDelivery: (id) => store.releaseDelivery(id),
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
  });

  const deps: IntakeDeps = {
    store,
    queues,
    budget: createGitHubWriteBudget({ redis, prefix }),
    abortBus,
    publicUrl: settings.publicUrl,
    githubFor: async (installationId) => (await probot!.auth(installationId)) as GitHubClient,
    log,
    // Run ids are keyed with the webhook secret: stable for a delivery, unguessable without it.
    runIdSecret: settings.webhookSecret === "development" ? randomUUID() : settings.webhookSecret,
    trustedApps: settings.trustedApps,
    defaults: settings.defaults,
  };
  const runDeps: RunDeps = deps;
  const executor =
    options.executor ??
    createLocalExecutor({ arches: settings.localArches, cacheDir: join(dataDir, "binaries") });
  let workers: Workers | undefined;
  if (settings.workers) {
    workers = startWorkers({
      connection: redis,
      prefix,
      deps: runDeps,
      intake: (job) => processIntake(deps, job.data),
      resolve: {
        executor,
        resolvePlan: options.resolvePlan ?? createPayloadPlanResolver({ cacheDir: join(dataDir, "cache") }),
        ...(options.imageWaitStepMs !== undefined ? { imageWaitStepMs: options.imageWaitStepMs } : {}),
      },
      execute: {
        executor,
        analyze: options.analyze ?? analyzeWithReports,
        dataDir,
        ...(options.progressIntervalMs !== undefined
          ? { progressIntervalMs: options.progressIntervalMs }
          : {}),
      },
      executeConcurrency: settings.runConcurrency,
    });
  }

  const http = await server.start();
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  log.info({ port, workers: settings.workers, executor: executor.name }, "netstress bot listening");
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      await server.stop();
      await workers?.close();
      await queues.close();
      await abortBus.close();
      await redis.quit();
    },
  };
}
