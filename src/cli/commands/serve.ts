import { join, resolve } from "node:path";
import type { Command } from "commander";
import { pino } from "pino";
import { loadBotSettings, SettingsError, type BotSettings } from "../../config/bot-settings.ts";
import { FarmError } from "../../farm/farm-error.ts";
import { parseCount } from "../parse-options.ts";
import { UsageError } from "../usage-error.ts";

interface ServeFlags {
  port?: string;
  host?: string;
  samplePayload?: boolean;
  workers: boolean;
}

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description(
      "Run the GitHub App: webhooks, run pages, /healthz and /readyz, and (by default) the workers that execute runs on this machine",
    )
    .option("--port <PORT>", "port to listen on (default: $PORT or 3000)")
    .option("--host <HOST>", "address to listen on (default: $HOST or 0.0.0.0)")
    .option(
      "--sample-payload",
      "build the bundled sample payload and test every repository without its own payload against it (to try the bot)",
    )
    .option("--no-workers", "serve webhooks only; workers run in other processes")
    .addHelpText(
      "after",
      "\nSettings come from the environment: APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET,\n" +
        "NETSTRESS_REDIS_URL, NETSTRESS_PUBLIC_URL … (see docs/github-app.md).",
    )
    .action(async (flags: ServeFlags) => {
      await serveCommand(flags);
    });
}

async function serveCommand(flags: ServeFlags): Promise<void> {
  let settings: BotSettings;
  try {
    settings = loadBotSettings();
  } catch (error) {
    if (error instanceof SettingsError) throw new UsageError(error.message);
    throw error;
  }
  if (flags.port !== undefined) settings.port = parseCount("--port", flags.port, { min: 1, max: 65535 });
  if (flags.host !== undefined) settings.host = flags.host;
  settings.workers = settings.workers && flags.workers;
  if (flags.samplePayload || settings.samplePayload) {
    const { buildSamplePayload } = await import("../../../examples/payload/build-sample-payload.ts");
    const sample = await buildSamplePayload({ outDir: join(resolve(settings.dataDir), "sample-payload") });
    settings.defaults = {
      payload: sample.payload,
      prImage: `oci:${sample.layoutDir}:pr-{tag}`,
      tags: [sample.override.tag],
    };
    process.stderr.write(`netstress serve: sample payload ${sample.payload}\n`);
  }
  // NETSTRESS_FARM_CONFIG: shards run as Jobs on build-farm clusters (docs/build-farm.md).
  const farmConfig = process.env.NETSTRESS_FARM_CONFIG;
  // Loaded on use: Probot and the Kubernetes client take seconds to load, which every other
  // command (and every in-pod runner) would otherwise pay at start-up.
  const { startFarm } = await import("../../farm/start-farm.ts");
  const { startBot } = await import("../../app/start-bot.ts");
  const { createMetrics } = await import("../../observability/metrics.ts");
  const metrics = createMetrics();
  const farm = farmConfig
    ? await startFarm({
        configPath: farmConfig,
        redisUrl: settings.redisUrl,
        prefix: settings.queuePrefix,
        logger: pino({ level: settings.logLevel, name: "netstress-farm" }),
        metrics,
      }).catch((error: unknown) => {
        // A farm configuration that does not load is the operator's to fix: say what, not where.
        throw error instanceof FarmError ? new UsageError(`NETSTRESS_FARM_CONFIG: ${error.message}`) : error;
      })
    : undefined;
  const bot = await startBot({ settings, metrics, ...(farm ? { executor: farm.executor } : {}) });
  if (farm && settings.workers) await farm.reconcile();
  process.stderr.write(
    `netstress serve: listening on port ${bot.port} (webhooks at ${settings.webhookPath})\n`,
  );
  await new Promise<void>((done) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stderr.write(`netstress serve: ${signal}, stopping\n`);
      // The farm's Jobs keep running for the worker that resumes their runs.
      farm?.executor.detach();
      bot
        .stop()
        .then(() => farm?.stop())
        .then(done, (error: unknown) => {
          process.stderr.write(`netstress serve: stopping failed: ${String(error)}\n`);
          done();
        });
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
