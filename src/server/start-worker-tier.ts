import type { IntakeDeps } from "../app/intake-deps.ts";
import { processIntake } from "../app/process-intake.ts";
import { SettingsError } from "../config/bot-settings.ts";
import { createRunAnalyzer } from "../history/run-analyzer.ts";
import { loadExtensionImageStreams } from "../payload/extension-image-streams.ts";
import { startDataDirSweeps } from "../payload/start-data-dir-sweeps.ts";
import { startPeriodics } from "../periodic/start-periodics.ts";
import { clusterSourceTraits } from "../queue/adaptive-design.ts";
import { createPayloadPlanResolver } from "../queue/payload-plan-resolver.ts";
import { createPowerPlanner } from "../queue/power-planner.ts";
import { createRunLiveness } from "../queue/run-liveness.ts";
import { startWorkers } from "../queue/start-workers.ts";
import type { BotSeams } from "./bot-seams.ts";
import type { Settings } from "./load-settings.ts";
import type { BotCore } from "./start-bot-core.ts";

/** The worker tier's parts, stopped in the order the bot's shutdown list gives. */
export interface WorkerTier {
  stopSweeps(): Promise<void>;
  closePeriodics(): Promise<void>;
  closeWorkers(): Promise<void>;
}

/**
 * The worker tier: the sweeps of run data and binaries, the intake, resolve and execute workers,
 * and the release periodics (which need the release-controller).
 */
export async function startWorkerTier(
  core: BotCore,
  settings: Settings,
  seams: BotSeams,
): Promise<WorkerTier> {
  const bot = settings.bot;
  const { log, store, dataDir, redis, prefix, executor, clusters, releaseController } = core;
  const deps: IntakeDeps = {
    ...core.runDeps,
    budgets: core.budgets,
    publicUrl: bot.publicUrl,
    githubFor: core.githubFor,
    runIdSecret: bot.runIdSecret,
    trustedApps: bot.trustedApps,
    defaults: bot.defaults,
    quotas: bot.quotas,
    releases: settings.registry.releases,
  };
  // Workers write run data and binaries, so they sweep them; an active run's directory stays.
  const sweeps = startDataDirSweeps({
    dataDir,
    maxAgeMs: settings.disk.retentionDays * 24 * 60 * 60_000,
    binaryMaxAgeMs: settings.disk.binaryRetentionHours * 60 * 60_000,
    isRunActive: createRunLiveness(store),
    logger: log.child({ name: "retention" }),
  });
  const extensions = (
    await Promise.all(settings.discovery.extensionImageStreams.map(loadExtensionImageStreams))
  ).flat();
  const workers = startWorkers({
    connection: redis,
    prefix,
    deps: core.runDeps,
    intake: (job) => processIntake(deps, job.data),
    resolve: {
      executor,
      resolvePlan:
        seams.resolvePlan ??
        createPayloadPlanResolver({
          registry: core.registry,
          ...(releaseController ? { releaseController } : {}),
          tagFilter: settings.discovery.tagFilter,
          ...(extensions.length > 0 ? { extensions } : {}),
          releases: settings.registry.releases,
          prPayloads: {
            wanted: () => clusters() !== undefined,
            ...(settings.registry.prPayloadRepository
              ? { repository: settings.registry.prPayloadRepository }
              : {}),
          },
        }),
      ...(seams.imageWaitStepMs !== undefined ? { imageWaitStepMs: seams.imageWaitStepMs } : {}),
      power: {
        plan:
          seams.planPower ?? createPowerPlanner({ redis, prefix, log: log.child({ name: "power-planner" }) }),
        clusterSource: () => clusterSourceTraits(clusters()),
      },
    },
    execute: {
      executor,
      clusters,
      analyze:
        seams.analyze ??
        createRunAnalyzer({
          history: core.history,
          log,
          flakyPayloads: settings.history.flakyPayloads,
          ...(core.quarantine ? { quarantine: core.quarantine } : {}),
        }),
      history: core.history,
      dataDir,
      publicUrl: bot.publicUrl,
      ...(seams.progressIntervalMs !== undefined ? { progressIntervalMs: seams.progressIntervalMs } : {}),
    },
    republish: core.republish,
    executeConcurrency: bot.runConcurrency,
  });
  let periodics: { close(): Promise<void> } | undefined;
  if (core.periodics && settings.periodicsConfigPath) {
    if (!releaseController) {
      throw new SettingsError("periodics need the release-controller: set NETSTRESS_RELEASE_CONTROLLER_URL");
    }
    periodics = await startPeriodics({
      connection: redis,
      prefix,
      config: core.periodics,
      watch: { path: settings.periodicsConfigPath },
      runs: core.runDeps,
      releaseController,
      log,
    });
  }
  return {
    stopSweeps: () => sweeps.stop(),
    closePeriodics: async () => {
      await periodics?.close();
    },
    closeWorkers: () => workers.close(),
  };
}
