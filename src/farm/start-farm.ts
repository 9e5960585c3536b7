import { Redis } from "ioredis";
import type { Logger } from "pino";
import { DEFAULT_TEST_BINARY_REGISTRY, loadTestBinaryRegistry } from "../payload/test-binary-registry.ts";
import { createFarmExecutor, type FarmExecutor, type FarmExecutorOptions } from "./farm-executor.ts";
import type { FarmConfig } from "./farm-config.ts";
import { reconcileFarmJobs } from "./reconcile-farm-jobs.ts";
import { loadFarmConfig } from "./load-farm-config.ts";
import { watchSettingsFile } from "../config/watch-settings-file.ts";

export interface RunningFarm {
  executor: FarmExecutor;
  /** The configuration in force (reloaded on change): its clusterSources serve clusters under test. */
  config: () => FarmConfig;
  /** The start-up reconciliation of the farm's Jobs against the runs. */
  reconcile(): Promise<void>;
  /** Call first when the process stops (see FarmExecutor.detach), then stop the workers, then this. */
  stop(): Promise<void>;
}

/**
 * The build farm for `netstress serve` (NETSTRESS_FARM_CONFIG): the configuration (reloaded on
 * change), the executor on its own Redis connection under the queue's prefix, and reconciliation.
 */
export async function startFarm(options: {
  configPath: string;
  redisUrl: string;
  prefix: string;
  logger: Logger;
  /** What the Jobs' record stream keys derive from (BotSettings.streamSecret). */
  streamSecret: string;
  /** Whether a run is still going (its Jobs are kept and adopted) or ended (they are deleted). */
  isRunActive: (runId: string) => Promise<boolean>;
  /** What the run's Jobs are labelled with beside the run id (a PR run's number). */
  runContext?: FarmExecutorOptions["runContext"];
  /** Counts each failed Kubernetes API call and watch, per cluster and HTTP status (none: absent). */
  onApiError?: FarmExecutorOptions["onApiError"];
  /** Test seams: shorter timeouts and polls. */
  tuning?: Pick<FarmExecutorOptions, "apiTimeoutMs" | "watchIdleMs" | "pollMs">;
}): Promise<RunningFarm> {
  const { logger, prefix } = options;
  // Placement, capacity, blocking and the pod template follow edits from the next shard on; a changed
  // kubeconfig or namespace of an existing cluster needs a restart, which is safe (Jobs are adopted).
  const source = await watchSettingsFile({
    path: options.configPath,
    load: loadFarmConfig,
    what: "farm configuration",
    logger,
  });
  const { testBinaries: registryPath } = source.current();
  const testBinaries = registryPath
    ? await loadTestBinaryRegistry(registryPath)
    : DEFAULT_TEST_BINARY_REGISTRY;
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 3 });
  // While Redis restarts, commands fail and are retried (dispatch waits for Redis); say so once per error.
  redis.on("error", (err: Error) => logger.warn({ err: err.message }, "farm redis connection"));
  const executor = createFarmExecutor({
    config: source.current,
    testBinaries,
    redis,
    prefix,
    logger,
    streamSecret: options.streamSecret,
    ...(options.runContext ? { runContext: options.runContext } : {}),
    ...(options.onApiError ? { onApiError: options.onApiError } : {}),
    ...options.tuning,
  });
  return {
    executor,
    config: source.current,
    async reconcile() {
      await reconcileFarmJobs({ executor, isRunActive: options.isRunActive, logger });
    },
    async stop() {
      executor.detach();
      executor.stop();
      source.stop();
      await redis.quit();
    },
  };
}
