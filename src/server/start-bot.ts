import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { ProbotOctokit } from "probot";
import { Probot, Server } from "probot";
import { createNetstressApp, HANDLED_EVENTS } from "../app/create-app.ts";
import { createHttpRoutes } from "../app/http-routes.ts";
import { registryChangesBetween } from "../trends/registry-changes-between.ts";
import { createStoredTrendViews } from "../trends/stored-trend-views.ts";
import { createTrendRoutes } from "../trends/trend-routes.ts";
import type { IntakeDeps } from "../app/intake-deps.ts";
import { processIntake } from "../app/process-intake.ts";
import { SettingsError, type BotSettings } from "../config/bot-settings.ts";
import type { GateSettings } from "../config/gate-settings.ts";
import type { HistorySettings } from "../config/history-settings.ts";
import { createClusterLeases } from "../clusters/cluster-leases.ts";
import type { ClusterTiming } from "../clusters/cluster-source.ts";
import { createClusterProvider } from "../clusters/create-cluster-provider.ts";
import { createLocalExecutor } from "../farm/local-executor.ts";
import { startFarm, type RunningFarm } from "../farm/start-farm.ts";
import type { QuarantineEntry } from "../analysis/quarantine.ts";
import type { PeriodicsConfig } from "../config/periodics-config.ts";
import { createGatePublisher } from "../gate/publish-gate-run.ts";
import { startPeriodics } from "../periodic/start-periodics.ts";
import { createGateRoutes } from "../gate/gate-routes.ts";
import { createGateStore } from "../gate/gate-store.ts";
import { createFileTokenSource } from "../gate/gate-tokens.ts";
import { createGitHubWriteBudgets } from "../github/github-write-budget.ts";
import { createCheckRunPublisher } from "../github/publish-check-run.ts";
import { createHistoryStore } from "../history/history-store.ts";
import { createRunAnalyzer } from "../history/run-analyzer.ts";
import { collectQueueGauges } from "../observability/collect-queue-gauges.ts";
import { createLogger } from "../observability/create-logger.ts";
import { instrumentExecutor, instrumentOctokit, instrumentRunStore } from "../observability/instrument.ts";
import { createMetrics, type Metrics } from "../observability/metrics.ts";
import { observeWebhooks } from "../observability/observe-webhooks.ts";
import { createObservabilityRoutes } from "../observability/observability-routes.ts";
import { createRunActivity } from "../observability/run-activity.ts";
import { loadExtensionImageStreams } from "../payload/extension-image-streams.ts";
import { createReleaseController } from "../payload/release-controller.ts";
import { createAbortBus } from "../queue/abort-bus.ts";
import { createDurablePublisher } from "../queue/durable-publisher.ts";
import { createPayloadPlanResolver } from "../queue/payload-plan-resolver.ts";
import { createPowerPlanner, type PlanRunPower } from "../queue/power-planner.ts";
import type { RunDeps } from "../queue/run-deps.ts";
import { createRunQueues } from "../queue/run-queues.ts";
import { requeueActiveRuns } from "../queue/requeue-active-runs.ts";
import { createRunLiveness } from "../queue/run-liveness.ts";
import { createRunStore } from "../queue/run-store.ts";
import { startWorkers, type Workers } from "../queue/start-workers.ts";
import type { Settings } from "./load-settings.ts";
import { serveInternal } from "./serve-internal.ts";
import {
  DEFAULT_DELIVERY_RECOVERY,
  startDeliveryRecovery,
  type DeliveryRecoveryTiming,
} from "./start-delivery-recovery.ts";
import { appWebhookDeliveries } from "../github/app-webhook-deliveries.ts";
import { DEFAULT_DISK_SETTINGS, type DiskSettings } from "../config/disk-settings.ts";
import { DEFAULT_REGISTRY_SETTINGS, type RegistrySettings } from "../config/registry-settings.ts";
import { startDataDirSweeps } from "../payload/start-data-dir-sweeps.ts";
import { createBotRegistry } from "./create-bot-registry.ts";
import { createRedisClaims } from "../github/redis-claims.ts";
import { redisKeys } from "../redis/redis-keys.ts";
import type { AnalyzeRunResults } from "../runs/analyze-port.ts";
import type { ResolveRunPlan } from "../runs/plan-resolver.ts";
import type { PublishRun } from "../runs/run-publisher.ts";
import type { SubjectKind } from "../runs/run-record.ts";
import type { ShardExecutor } from "../runs/shard-executor.ts";
import type { GitHubClient } from "../trust/github-client.ts";

export interface StartBotOptions {
  settings: BotSettings;
  /** Release gates (and release_stream); none when absent. */
  gate?: GateSettings;
  history?: HistorySettings;
  /** Which registries and layouts images are read from (default: DEFAULT_REGISTRY_SETTINGS). */
  registry?: RegistrySettings;
  /** Retention of run data and binaries, the image cache's size (default: DEFAULT_DISK_SETTINGS). */
  disk?: DiskSettings;
  /** Payload discovery beyond the defaults (tag filter, extensions outside the payload). */
  discovery?: Settings["discovery"];
  /** Tests that never fail a PR's conclusion (NETSTRESS_QUARANTINE_CONFIG). */
  quarantine?: readonly QuarantineEntry[];
  /**
   * Release periodics: the file NETSTRESS_PERIODICS_CONFIG names, reloaded when it changes, and its
   * contents as loaded at start-up. They need the gate's release-controller.
   */
  periodics?: { configPath: string; config: PeriodicsConfig; reloadIntervalMs?: number };
  /** NETSTRESS_FARM_CONFIG: runs execute as Jobs on build farms (docs/build-farm.md). */
  farm?: {
    configPath: string;
    tuning?: Parameters<typeof startFarm>[0]["tuning"];
    /** How often the clusterSources' hubs and clusters are polled (default: every 10 s, health every 30 s). */
    clusterTiming?: Partial<ClusterTiming>;
  };
  log?: Logger;
  /** Probot's Octokit class; tests pass one with throttling off. */
  Octokit?: typeof ProbotOctokit;
  metrics?: Metrics;
  /** Where runs execute; the build farm when configured, else the embedded local executor. */
  executor?: ShardExecutor;
  resolvePlan?: ResolveRunPlan;
  /** What a run's design can see (default: the seeded planner, cached in Redis). */
  planPower?: PlanRunPower;
  analyze?: AnalyzeRunResults;
  progressIntervalMs?: number;
  imageWaitStepMs?: number;
  /** How missed webhook deliveries are recovered (default: DEFAULT_DELIVERY_RECOVERY). */
  deliveryRecovery?: Partial<DeliveryRecoveryTiming>;
}

export interface RunningBot {
  /** Where the bot listens (webhooks at settings.webhookPath). */
  url: string;
  port: number;
  /** Where /metrics and /runs are served (settings.internalPort). */
  internalUrl: string;
  stop(): Promise<void>;
}

/**
 * `netstress serve`, the composition root: builds every store, the one registry client, the
 * executor, the publishers of each run subject and the workers from settings parsed once, and
 * injects them. Serves Probot's webhooks, /healthz, /readyz, the run pages and (with gate tokens)
 * the gate API; unless settings.workers is false, runs the intake, resolve and execute workers in
 * the same process. Probot gets no Redis configuration; the queues have their own connection.
 */
export async function startBot(options: StartBotOptions): Promise<RunningBot> {
  const { settings } = options;
  if (settings.workers && !settings.privateKey) {
    throw new SettingsError(
      "workers call GitHub and need the app's private key: set PRIVATE_KEY or PRIVATE_KEY_PATH, or run the web tier only (--no-workers)",
    );
  }
  const log = options.log ?? createLogger({ level: settings.logLevel });
  const dataDir = resolve(settings.dataDir);
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  await redis.connect();
  const prefix = settings.queuePrefix;
  const metrics = options.metrics ?? createMetrics();
  const activity = createRunActivity({ redis, prefix });
  const store = instrumentRunStore(createRunStore({ redis, prefix }), { metrics, activity });
  const { flakyPayloads, ...historyBounds } = options.history ?? { flakyPayloads: 0 };
  const history = createHistoryStore({ redis, prefix, ...historyBounds });
  const gates = createGateStore({ redis, prefix });
  const queues = createRunQueues({ connection: redis, prefix });
  const abortBus = await createAbortBus({ redis, prefix });
  const farm: RunningFarm | undefined = options.farm
    ? await startFarm({
        configPath: options.farm.configPath,
        redisUrl: settings.redisUrl,
        prefix,
        logger: log.child({ name: "netstress-farm" }),
        isRunActive: createRunLiveness(store),
        runContext: async (runId) => {
          const run = await store.get(runId);
          return run?.subject.kind === "pr" ? { pr: run.subject.pr } : undefined;
        },
        onApiError: (cluster, status) => metrics.kubernetesApiError({ cluster, status }),
        ...(options.farm.tuning ? { tuning: options.farm.tuning } : {}),
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
        ...(options.farm?.clusterTiming ? { timing: options.farm.clusterTiming } : {}),
      })
    : undefined;
  const clusters = () =>
    clusterProvider && farm!.config().clusterSources.length > 0 ? clusterProvider : undefined;
  const executor = instrumentExecutor(
    options.executor ??
      farm?.executor ??
      createLocalExecutor({
        arches: settings.localArches,
        cacheDir: join(dataDir, "binaries"),
        onNotice: (message) => log.warn({ executor: "local" }, message),
      }),
    metrics,
  );
  const releaseController = options.gate?.releaseControllerUrl
    ? createReleaseController({ baseUrl: options.gate.releaseControllerUrl })
    : undefined;
  metrics.onCollect(async (gauges) => {
    const [active] = await Promise.all([
      activity.activeByState(),
      collectQueueGauges(gauges, [queues.intake, queues.resolve, queues.execute, queues.publish]),
    ]);
    for (const [state, count] of active) gauges.activeRuns(state, count);
  });

  const disk = options.disk ?? DEFAULT_DISK_SETTINGS;
  // Workers read payloads to plan runs; the web tier reads them for the trend pages' changes.
  const registry = await createBotRegistry({
    bot: settings,
    dataDir,
    disk,
    access: options.registry ?? DEFAULT_REGISTRY_SETTINGS,
    logger: log.child({ name: "registry" }),
  });

  let probot: Probot | undefined;
  const githubFor = async (installationId: number) =>
    instrumentOctokit((await probot!.auth(installationId)) as GitHubClient, metrics, installationId);
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
      publicUrl: settings.publicUrl,
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
  const runDeps: RunDeps = { store, queues, abortBus, publish: publishing.publish, log };

  const ProbotWithSettings = Probot.defaults({
    appId: settings.appId,
    // A web tier holds no private key: it verifies webhooks with the secret and calls no GitHub API,
    // so Probot gets a token that nothing ever sends.
    ...(settings.privateKey
      ? { privateKey: settings.privateKey }
      : { githubToken: "web-tier-calls-no-github-api" }),
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
        ignore: (deliveryId) => store.markDeliveryHandled(deliveryId),
      },
    })(app, appOptions);
    appOptions.addHandler(
      createHttpRoutes({
        store,
        publicUrl: settings.publicUrl,
        dataDir,
        ready: async () => (await redis.ping()) === "PONG",
      }),
    );
    appOptions.addHandler(
      createTrendRoutes({
        views: createStoredTrendViews({
          history,
          changesBetween: registryChangesBetween({ redis, prefix, registry }),
          redis,
          prefix,
          onError: (error) => log.warn({ err: error }, "trend view not computed"),
        }),
      }),
    );
    if (options.gate?.tokensPath && releaseController) {
      appOptions.addHandler(
        createGateRoutes({
          gates,
          runs: runDeps,
          runSettings: options.gate,
          tokens: createFileTokenSource({ path: options.gate.tokensPath, log }),
          releaseController,
          publicUrl: settings.publicUrl,
          dataDir,
          log,
        }),
      );
    }
  });

  const deps: IntakeDeps = {
    ...runDeps,
    budgets,
    publicUrl: settings.publicUrl,
    githubFor,
    runIdSecret: settings.runIdSecret,
    trustedApps: settings.trustedApps,
    defaults: settings.defaults,
    quotas: settings.quotas,
    releases: (options.registry ?? DEFAULT_REGISTRY_SETTINGS).releases,
  };
  let workers: Workers | undefined;
  let periodics: { close(): Promise<void> } | undefined;
  // Workers write run data and binaries, so they sweep them; an active run's directory stays.
  const sweeps = settings.workers
    ? startDataDirSweeps({
        dataDir,
        maxAgeMs: disk.retentionDays * 24 * 60 * 60_000,
        binaryMaxAgeMs: disk.binaryRetentionHours * 60 * 60_000,
        isRunActive: createRunLiveness(store),
        logger: log.child({ name: "retention" }),
      })
    : undefined;
  if (settings.workers) {
    const extensions = (
      await Promise.all((options.discovery?.extensionImageStreams ?? []).map(loadExtensionImageStreams))
    ).flat();
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
            registry,
            ...(releaseController ? { releaseController } : {}),
            ...(options.discovery ? { tagFilter: options.discovery.tagFilter } : {}),
            ...(extensions.length > 0 ? { extensions } : {}),
            releases: (options.registry ?? DEFAULT_REGISTRY_SETTINGS).releases,
            prPayloads: {
              wanted: () => clusters() !== undefined,
              ...(options.registry?.prPayloadRepository
                ? { repository: options.registry.prPayloadRepository }
                : {}),
            },
          }),
        ...(options.imageWaitStepMs !== undefined ? { imageWaitStepMs: options.imageWaitStepMs } : {}),
        power: {
          plan:
            options.planPower ??
            createPowerPlanner({ redis, prefix, log: log.child({ name: "power-planner" }) }),
          hasClusterSource: () => clusters() !== undefined,
        },
      },
      execute: {
        executor,
        clusters,
        analyze:
          options.analyze ??
          createRunAnalyzer({
            history,
            log,
            flakyPayloads,
            ...(options.quarantine ? { quarantine: options.quarantine } : {}),
          }),
        dataDir,
        publicUrl: settings.publicUrl,
        ...(options.progressIntervalMs !== undefined
          ? { progressIntervalMs: options.progressIntervalMs }
          : {}),
      },
      republish: publishing.republish,
      executeConcurrency: settings.runConcurrency,
    });
    if (options.periodics) {
      if (!releaseController) {
        throw new SettingsError(
          "periodics need the release-controller: set NETSTRESS_RELEASE_CONTROLLER_URL",
        );
      }
      periodics = await startPeriodics({
        connection: redis,
        prefix,
        config: options.periodics.config,
        watch: {
          path: options.periodics.configPath,
          ...(options.periodics.reloadIntervalMs !== undefined
            ? { intervalMs: options.periodics.reloadIntervalMs }
            : {}),
        },
        runs: runDeps,
        releaseController,
        log,
      });
    }
    // Jobs of runs that ended while no bot ran go; those of active runs are adopted.
    await farm?.reconcile();
    // Claims, deployments and leases of runs that ended while no bot ran are given back.
    const provider = clusters();
    if (provider) {
      try {
        const { released } = await provider.reconcile(
          async () => new Set((await store.listActive()).map((run) => run.id)),
        );
        if (released > 0) log.info({ released }, "gave back clusters under test of ended runs");
      } catch (error) {
        // A hub that does not answer now is tried again at the next start; Hive's own lifetimes hold.
        log.warn({ err: error }, "clusters under test not reconciled");
      }
    }
    // Runs whose queue job was never added (the process died in between) go on their way now.
    await requeueActiveRuns({ runs: store, queues, logger: log });
  }

  const http = await server.start();
  observeWebhooks({
    server: http,
    webhookPath: settings.webhookPath,
    metrics,
    events: [...new Set(HANDLED_EVENTS.map((event) => event.split(".")[0]!))],
  });
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  // /metrics and the index of recent runs name every installation's runs: never on the public port.
  const internal = await serveInternal({
    routes: createObservabilityRoutes({ metrics, activity, getRun: (id) => store.get(id) }),
    port: settings.internalPort,
    host: settings.internalHost,
    log,
  });
  log.info(
    { port, internalPort: internal.port, workers: settings.workers, executor: executor.name },
    "netstress bot listening",
  );
  // Deliveries GitHub failed to make while no bot listened: once listening, so they can arrive.
  const recoveryTiming = { ...DEFAULT_DELIVERY_RECOVERY, ...options.deliveryRecovery };
  const recovery = settings.workers
    ? startDeliveryRecovery({
        // Authenticated as the app (a JWT): the deliveries API is the app's, not an installation's.
        deliveries: appWebhookDeliveries((await probot!.auth()) as GitHubClient),
        isHandled: (guid) => store.isDeliveryHandled(guid),
        claim: createRedisClaims({
          redis,
          key: redisKeys(prefix).deliveryRedelivery,
          claimMs: recoveryTiming.claimMs,
        }),
        onRecovered: ({ event }) => metrics.deliveryRecovered({ event }),
        timing: recoveryTiming,
        log: log.child({ name: "delivery-recovery" }),
      })
    : undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    internalUrl: `http://127.0.0.1:${internal.port}`,
    async stop() {
      // The farm's Jobs keep running for the worker that resumes their runs.
      farm?.executor.detach();
      await recovery?.stop();
      await internal.close();
      await server.stop();
      await sweeps?.stop();
      await periodics?.close();
      await workers?.close();
      await queues.close();
      await abortBus.close();
      clusterProvider?.stop();
      await farm?.stop();
      await redis.quit();
    },
  };
}
