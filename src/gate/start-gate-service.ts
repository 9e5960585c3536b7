import { join } from "node:path";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { ApplicationFunctionOptions } from "probot";
import type { ShardExecutor } from "../farm/shard-executor.ts";
import type { HistoryStore } from "../history/history-store.ts";
import { createGatePlanResolver } from "./gate-plan-resolver.ts";
import { createGateQueue, startGateWorker, type GateQueue } from "./gate-queue.ts";
import { createGateRoutes } from "./gate-routes.ts";
import type { GateSettings } from "./gate-settings.ts";
import { createGateStore } from "./gate-store.ts";
import { createFileTokenSource } from "./gate-tokens.ts";
import { createReleaseController, type ReleaseController } from "./release-controller.ts";
import { requeueActiveGates } from "./requeue-active-gates.ts";

type Handler = Parameters<ApplicationFunctionOptions["addHandler"]>[0];

export interface GateService {
  /** The gate API's routes; absent when no tokens secret is configured. */
  routes?: Handler;
  /** The gate queue (for its depth and age metrics); absent without a release-controller. */
  queue?: GateQueue;
  /** Resolves release streams, for gates and for repositories' release_stream. */
  releaseController?: ReleaseController;
  /**
   * Starts this process's gate worker (a no-op without a release-controller), and queues the
   * unfinished arches of active gates whose jobs were lost.
   */
  startWorker(): void;
  close(): Promise<void>;
}

/**
 * Everything the gate needs, built from its settings and the bot's shared pieces: the same Redis,
 * queue prefix, executor (farms or this machine), data directory and history pool as PR runs.
 */
export function createGateService(options: {
  settings: GateSettings;
  redis: Redis;
  prefix: string;
  dataDir: string;
  publicUrl: string;
  history: HistoryStore;
  executor: ShardExecutor;
  log: Logger;
}): GateService {
  const { settings, redis, prefix, dataDir, publicUrl, history, executor, log } = options;
  const releaseController = settings.releaseControllerUrl
    ? createReleaseController({ baseUrl: settings.releaseControllerUrl })
    : undefined;
  if (!releaseController) return { startWorker() {}, close: async () => {} };
  const store = createGateStore({ redis, prefix });
  const queue = createGateQueue({ connection: redis, prefix });
  let worker: { close(): Promise<void> } | undefined;
  return {
    ...(settings.tokensPath
      ? {
          routes: createGateRoutes({
            store,
            queue,
            tokens: createFileTokenSource({ path: settings.tokensPath, log }),
            releaseController,
            publicUrl,
            dataDir,
            log,
          }),
        }
      : {}),
    queue,
    releaseController,
    startWorker() {
      worker ??= startGateWorker({
        connection: redis,
        prefix,
        concurrency: settings.concurrency,
        deps: {
          store,
          history,
          executor,
          resolvePlan: createGatePlanResolver({ cacheDir: join(dataDir, "cache") }),
          dataDir,
          publicUrl,
          parallel: settings.parallel,
          timeoutMinutes: settings.timeoutMinutes,
          log,
        },
      });
      requeueActiveGates({ store, queue, log }).catch((error: unknown) =>
        log.warn({ err: error }, "active gates not re-queued; the next worker start tries again"),
      );
    },
    async close() {
      await worker?.close();
      await queue.close();
    },
  };
}
