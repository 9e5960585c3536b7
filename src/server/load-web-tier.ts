import { Probot, Server } from "probot";
import { createNetstressApp, HANDLED_EVENTS } from "../app/create-app.ts";
import { createHttpRoutes } from "../app/http-routes.ts";
import { createGateRoutes } from "../gate/gate-routes.ts";
import { createFileTokenSource } from "../gate/gate-tokens.ts";
import { observeWebhooks } from "../observability/observe-webhooks.ts";
import { createObservabilityRoutes } from "../observability/observability-routes.ts";
import { registryChangesBetween } from "../trends/registry-changes-between.ts";
import { createStoredTrendViews } from "../trends/stored-trend-views.ts";
import { createTrendRoutes } from "../trends/trend-routes.ts";
import type { BotSeams } from "./bot-seams.ts";
import type { Settings } from "./load-settings.ts";
import { serveInternal } from "./serve-internal.ts";
import type { BotCore } from "./start-bot-core.ts";

/** The web tier, loaded but not yet listening. */
export interface WebTier {
  /** Starts serving; the public and internal ports it got. */
  listen(): Promise<{ port: number; internalPort: number }>;
  /** Stops the internal server, then the public one. */
  stopInternal(): Promise<void>;
  stopPublic(): Promise<void>;
}

/**
 * Probot's webhooks (verified with the secret, claimed into the intake queue), /healthz, /readyz,
 * the run and trend pages and, with gate tokens, the gate API, on the public port; /metrics and the
 * index of recent runs on the internal one. Probot gets no Redis configuration. Loading attaches
 * the Probot app to the core, so GitHub clients can be made from then on.
 */
export async function loadWebTier(core: BotCore, settings: Settings, seams: BotSeams): Promise<WebTier> {
  const bot = settings.bot;
  const { log, store, queues, redis, prefix, dataDir } = core;
  const ProbotWithSettings = Probot.defaults({
    appId: bot.appId,
    // A web tier holds no private key: it verifies webhooks with the secret and calls no GitHub API,
    // so Probot gets a token that nothing ever sends.
    ...(bot.privateKey ? { privateKey: bot.privateKey } : { githubToken: "web-tier-calls-no-github-api" }),
    secret: bot.webhookSecret,
    baseUrl: bot.githubBaseUrl,
    log,
    ...(seams.Octokit ? { Octokit: seams.Octokit } : {}),
  });
  const server = new Server({
    Probot: ProbotWithSettings,
    port: bot.port,
    host: bot.host,
    webhookPath: bot.webhookPath,
    log,
  });
  await server.load((app, appOptions) => {
    core.attachApp(app);
    createNetstressApp({
      appId: bot.appId,
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
        publicUrl: bot.publicUrl,
        dataDir,
        ready: async () => (await redis.ping()) === "PONG",
      }),
    );
    appOptions.addHandler(
      createTrendRoutes({
        views: createStoredTrendViews({
          history: core.history,
          changesBetween: registryChangesBetween({ redis, prefix, registry: core.registry }),
          redis,
          prefix,
          onError: (error) => log.warn({ err: error }, "trend view not computed"),
        }),
      }),
    );
    if (settings.gate.tokensPath && core.releaseController) {
      appOptions.addHandler(
        createGateRoutes({
          gates: core.gates,
          runs: core.runDeps,
          runSettings: settings.gate,
          tokens: createFileTokenSource({ path: settings.gate.tokensPath, log }),
          releaseController: core.releaseController,
          publicUrl: bot.publicUrl,
          dataDir,
          log,
        }),
      );
    }
  });

  let internal: Awaited<ReturnType<typeof serveInternal>> | undefined;
  return {
    async listen() {
      const http = await server.start();
      observeWebhooks({
        server: http,
        webhookPath: bot.webhookPath,
        metrics: core.metrics,
        events: [...new Set(HANDLED_EVENTS.map((event) => event.split(".")[0]!))],
      });
      const address = http.address();
      const port = typeof address === "object" && address ? address.port : bot.port;
      // /metrics and the index of recent runs name every installation's runs: never on the public port.
      internal = await serveInternal({
        routes: createObservabilityRoutes({
          metrics: core.metrics,
          activity: core.activity,
          getRun: (id) => store.get(id),
        }),
        port: bot.internalPort,
        host: bot.internalHost,
        log,
      });
      return { port, internalPort: internal.port };
    },
    async stopInternal() {
      await internal?.close();
    },
    async stopPublic() {
      await server.stop();
    },
  };
}
