import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import type { Probot } from "probot";
import type { QuarantineEntry } from "../analysis/quarantine.ts";
import { createClusterLeases } from "../clusters/cluster-leases.ts";
import { createClusterProvider } from "../clusters/create-cluster-provider.ts";
import { loadPeriodicsConfig, type PeriodicsConfig } from "../config/periodics-config.ts";
import { loadQuarantineConfig } from "../config/quarantine-config.ts";
import { createLocalExecutor } from "../farm/local-executor.ts";
import { startFarm, type RunningFarm } from "../farm/start-farm.ts";
import { createGatePublisher } from "../gate/publish-gate-run.ts";
import { createGateStore, type GateStore } from "../gate/gate-store.ts";
import { createGitHubWriteBudgets, type GitHubWriteBudgets } from "../github/github-write-budget.ts";
import { createCheckRunPublisher } from "../github/publish-check-run.ts";
import { createRedisClaims } from "../github/redis-claims.ts";
import { createHistoryStore, type HistoryStore } from "../history/history-store.ts";
import { collectQueueGauges } from "../observability/collect-queue-gauges.ts";
import { createLogger } from "../observability/create-logger.ts";
import {
  instrumentExecutor,
  instrumentGateStore,
  instrumentOctokit,
  instrumentRunStore,
} from "../observability/instrument.ts";
import { createMetrics, type Metrics } from "../observability/metrics.ts";
import { createRunActivity, type RunActivity } from "../observability/run-activity.ts";
import { createReleaseController, type ReleaseController } from "../payload/release-controller.ts";
import { createAbortBus, type AbortBus } from "../queue/abort-bus.ts";
import { createDurablePublisher } from "../queue/durable-publisher.ts";
import type { RunDeps } from "../queue/run-deps.ts";
import { createRunQueues, type RunQueues } from "../queue/run-queues.ts";
import { createRunLiveness } from "../queue/run-liveness.ts";
import { createRunStore, type RunStore } from "../queue/run-store.ts";
import { redisKeys } from "../redis/redis-keys.ts";
import type { PublishRun } from "../runs/run-publisher.ts";
import type { SubjectKind } from "../runs/run-record.ts";
import type { ShardExecutor } from "../runs/shard-executor.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { Logger } from "pino";
import type { BotSeams } from "./bot-seams.ts";
import { createBotRegistry } from "./create-bot-registry.ts";
import type { Settings } from "./load-settings.ts";

type ClusterProvider = ReturnType<typeof createClusterProvider>;

/** What both tiers share: the Redis connection and every store, the executor and the publishers. */
export interface BotCore {
  log: Logger;
  redis: Redis;
  prefix: string;
  dataDir: string;
  metrics: Metrics;
  activity: RunActivity;
  store: RunStore;
  history: HistoryStore;
  gates: GateStore;
  queues: RunQueues;
  abortBus: AbortBus;
  farm: RunningFarm | undefined;
  clusterProvider: ClusterProvider | undefined;
  /** The cluster provider while the farm configuration names clusterSources. */
  clusters: () => ClusterProvider | undefined;
  executor: ShardExecutor;
  releaseController: ReleaseController | undefined;
  registry: Awaited<ReturnType<typeof createBotRegistry>>;
  budgets: GitHubWriteBudgets;
  /** An installation's GitHub client, once the web tier has attached the Probot app. */
  githubFor: (installationId: number) => Promise<GitHubClient>;
  /** The app's own GitHub client (a JWT), once the web tier has attached the Probot app. */
  githubAsApp: () => Promise<GitHubClient>;
  attachApp(app: Probot): void;
  runDeps: RunDeps;
  republish: ReturnType<typeof createDurablePublisher>["republish"];
  /** The periodics and quarantine files as loaded at start-up. */
  periodics: PeriodicsConfig | undefined;
  quarantine: readonly QuarantineEntry[] | undefined;
}

/**
 * The core of `netstress serve`: reads the configuration files the settings name (before anything
 * connects), then builds every store on the one Redis connection, the farm and the clusters under
 * test when configured, the executor, the one registry client, and the publisher of each run
 * subject behind the durable publisher.
 */
export async function startBotCore(settings: Settings, seams: BotSeams): Promise<BotCore> {
  const bot = settings.bot;
  const periodics = settings.periodicsConfigPath
    ? await loadPeriodicsConfig(settings.periodicsConfigPath)
    : undefined;
  const quarantine = settings.quarantineConfigPath
    ? (await loadQuarantineConfig(settings.quarantineConfigPath)).quarantine
    : undefined;
  const log = seams.log ?? createLogger({ level: bot.logLevel });
  const dataDir = resolve(bot.dataDir);
  const redis = new Redis(bot.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  await redis.connect();
  const prefix = bot.queuePrefix;
  const metrics = seams.metrics ?? createMetrics();
  const activity = createRunActivity({ redis, prefix });
  const store = instrumentRunStore(createRunStore({ redis, prefix }), { metrics, activity });
  const { windowDays, maxRuns, maxPayloads } = settings.history;
  const history = createHistoryStore({ redis, prefix, windowDays, maxRuns, maxPayloads });
  const gates = instrumentGateStore(createGateStore({ redis, prefix }), { metrics, activity });
  const queues = createRunQueues({ connection: redis, prefix });
  const abortBus = await createAbortBus({ redis, prefix });
  const farm: RunningFarm | undefined = settings.farmConfigPath
    ? await startFarm({
        configPath: settings.farmConfigPath,
        redisUrl: bot.redisUrl,
        prefix,
        logger: log.child({ name: "netstress-farm" }),
        streamSecret: bot.streamSecret,
        isRunActive: createRunLiveness(store),
        runContext: async (runId) => {
          const run = await store.get(runId);
          return run?.subject.kind === "pr" ? { pr: run.subject.pr } : undefined;
        },
        onApiError: (cluster, status) => metrics.kubernetesApiError({ cluster, status }),
      })
    : undefined;
  // Clusters under test from the farm configuration's clusterSources (hot reloaded); without any,
  // runs go against the farm's own cluster under test as before.
  const clusterProvider = farm
    ? createClusterProvider({
        sources: () => farm.config().clusterSources,
        leases: createClusterLeases({ redis, prefix, leaseMs: farm.config().placement.leaseSeconds * 1000 }),
        prefix,
        logger: log.child({ name: "netstress-clusters" }),
        ...(seams.clusterTiming ? { timing: seams.clusterTiming } : {}),
      })
    : undefined;
  const clusters = () =>
    clusterProvider && farm!.config().clusterSources.length > 0 ? clusterProvider : undefined;
  // Workers read payloads to plan runs, the local executor its binaries; the web tier the trend
  // pages' changes.
  const registry = await createBotRegistry({
    bot,
    dataDir,
    disk: settings.disk,
    access: settings.registry,
    logger: log.child({ name: "registry" }),
  });
  const executor = instrumentExecutor(
    seams.executor ??
      farm?.executor ??
      createLocalExecutor({
        arches: bot.localArches,
        cacheDir: join(dataDir, "binaries"),
        images: { registry, outDir: join(dataDir, "cache", "binaries") },
        onNotice: (message) => log.warn({ executor: "local" }, message),
      }),
    metrics,
  );
  const releaseController = settings.gate.releaseControllerUrl
    ? createReleaseController({ baseUrl: settings.gate.releaseControllerUrl })
    : undefined;
  metrics.onCollect(async (gauges) => {
    const [active] = await Promise.all([
      activity.activeByState(),
      collectQueueGauges(gauges, [queues.intake, queues.resolve, queues.execute, queues.publish]),
    ]);
    for (const [state, count] of active) gauges.activeRuns(state, count);
  });

  let app: Probot | undefined;
  const githubFor = async (installationId: number) =>
    instrumentOctokit((await app!.auth(installationId)) as GitHubClient, metrics, installationId);
  const budgets = createGitHubWriteBudgets({
    redis,
    prefix,
    onMissingPermission: (installation, permission) => {
      log.error(
        { installation, permission },
        "GitHub refused a write for a missing permission: the installation's writes are paused; the next reply says what to grant",
      );
      metrics.githubMissingPermission({ installation, permission });
    },
  });
  const publishers: Record<SubjectKind, PublishRun> = {
    pr: createCheckRunPublisher({
      store,
      budgets,
      githubFor,
      publicUrl: bot.publicUrl,
      // GitHub appends annotations on every update: each check run gets them once.
      claimAnnotations: createRedisClaims({
        redis,
        key: redisKeys(prefix).checkRunAnnotated,
        claimMs: 30 * 24 * 3600_000,
      }),
      log,
    }),
    gate: createGatePublisher({ gates, runs: store }),
    // A periodic's record is all there is to tell: its results join the stream's history.
    periodic: async (run) => run,
  };
  const publishing = createDurablePublisher({
    publish: (run) => publishers[run.subject.kind](run),
    store,
    queues,
    log,
  });
  return {
    log,
    redis,
    prefix,
    dataDir,
    metrics,
    activity,
    store,
    history,
    gates,
    queues,
    abortBus,
    farm,
    clusterProvider,
    clusters,
    executor,
    releaseController,
    registry,
    budgets,
    githubFor,
    githubAsApp: async () => (await app!.auth()) as GitHubClient,
    attachApp(probot) {
      app = probot;
    },
    runDeps: { store, queues, abortBus, publish: publishing.publish, log },
    republish: publishing.republish,
    periodics,
    quarantine,
  };
}
