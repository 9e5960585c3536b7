import { SettingsError } from "../config/bot-settings.ts";
import { appWebhookDeliveries } from "../github/app-webhook-deliveries.ts";
import { createRedisClaims } from "../github/redis-claims.ts";
import { redisKeys } from "../redis/redis-keys.ts";
import type { BotSeams } from "./bot-seams.ts";
import type { Settings } from "./load-settings.ts";
import { loadWebTier } from "./load-web-tier.ts";
import { reconcileAtStartUp } from "./reconcile-at-start-up.ts";
import { startBotCore } from "./start-bot-core.ts";
import { DEFAULT_DELIVERY_RECOVERY, startDeliveryRecovery } from "./start-delivery-recovery.ts";
import { startWorkerTier } from "./start-worker-tier.ts";

export type { BotSeams } from "./bot-seams.ts";

export interface RunningBot {
  /** Where the bot listens (webhooks at settings.webhookPath). */
  url: string;
  port: number;
  /** Where /metrics and /runs are served (settings.internalPort). */
  internalUrl: string;
  stop(): Promise<void>;
}

/**
 * `netstress serve`, the composition root, from the settings loadSettings returned: the core
 * (every store, the registry client, the executor, the publishers), the web tier, and unless
 * settings.bot.workers is false the worker tier and the start-up reconciliation; then it listens,
 * and a worker tier recovers the webhook deliveries GitHub failed to make meanwhile.
 */
export async function startBot(settings: Settings, seams: BotSeams = {}): Promise<RunningBot> {
  const bot = settings.bot;
  if (bot.workers && !bot.privateKey) {
    throw new SettingsError(
      "workers call GitHub and need the app's private key: set PRIVATE_KEY or PRIVATE_KEY_PATH, or run the web tier only (--no-workers)",
    );
  }
  const core = await startBotCore(settings, seams);
  const web = await loadWebTier(core, settings, seams);
  const workers = bot.workers ? await startWorkerTier(core, settings, seams) : undefined;
  if (workers) await reconcileAtStartUp(core);

  const { port, internalPort } = await web.listen();
  core.log.info(
    { port, internalPort, workers: bot.workers, executor: core.executor.name },
    "netstress bot listening",
  );
  // Deliveries GitHub failed to make while no bot listened: once listening, so they can arrive.
  const recoveryTiming = { ...DEFAULT_DELIVERY_RECOVERY, ...seams.deliveryRecovery };
  const recovery = workers
    ? startDeliveryRecovery({
        // Authenticated as the app (a JWT): the deliveries API is the app's, not an installation's.
        deliveries: appWebhookDeliveries(await core.githubAsApp()),
        isHandled: (guid) => core.store.isDeliveryHandled(guid),
        claim: createRedisClaims({
          redis: core.redis,
          key: redisKeys(core.prefix).deliveryRedelivery,
          claimMs: recoveryTiming.claimMs,
        }),
        onRecovered: ({ event }) => core.metrics.deliveryRecovered({ event }),
        timing: recoveryTiming,
        log: core.log.child({ name: "delivery-recovery" }),
      })
    : undefined;

  // The shutdown order, in one place: intake stops before the workers, the workers before the
  // queues and connections they use.
  const shutdown: (() => unknown)[] = [
    // The farm's Jobs keep running for the worker that resumes their runs.
    () => core.farm?.executor.detach(),
    () => recovery?.stop(),
    () => web.stopInternal(),
    () => web.stopPublic(),
    () => workers?.stopSweeps(),
    () => workers?.closePeriodics(),
    () => workers?.closeWorkers(),
    () => core.queues.close(),
    () => core.abortBus.close(),
    () => core.clusterProvider?.stop(),
    () => core.farm?.stop(),
    () => core.redis.quit(),
  ];
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    async stop() {
      for (const step of shutdown) await step();
    },
  };
}
