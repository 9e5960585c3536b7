import { join, resolve } from "node:path";
import { importTestbed } from "../import-testbed.ts";
import type { Command } from "commander";
import { loadSettings, type Settings } from "../../server/load-settings.ts";
import { FarmError } from "../../farm/farm-error.ts";
import { KubeError } from "@netstress/core/kube/kube-error.ts";
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
  // Every setting is read and checked before anything connects; a SettingsError names them all.
  const settings = await withServeFlags(loadSettings(), flags);
  // Loaded on use: Probot and the Kubernetes client take seconds to load, which every other
  // command (and every in-pod runner) would otherwise pay at start-up.
  const { startBot } = await import("../../server/start-bot.ts");
  const bot = await startBot(settings).catch((error: unknown) => {
    // A farm configuration that does not load (or names a kubeconfig with no server) is the
    // operator's to fix: say what, not where.
    throw error instanceof FarmError || error instanceof KubeError
      ? new UsageError(`NETSTRESS_FARM_CONFIG: ${error.message}`)
      : error;
  });
  process.stderr.write(
    `netstress serve: listening on port ${bot.port} (webhooks at ${settings.bot.webhookPath})\n`,
  );
  await new Promise<void>((done) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stderr.write(`netstress serve: ${signal}, stopping\n`);
      bot.stop().then(done, (error: unknown) => {
        process.stderr.write(`netstress serve: stopping failed: ${String(error)}\n`);
        done();
      });
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

/**
 * The settings with the command line's say: --port, --host and --no-workers over the environment,
 * and with --sample-payload (or NETSTRESS_SAMPLE_PAYLOAD) the bundled sample payload, built now, as
 * the default payload of every repository without its own.
 */
async function withServeFlags(settings: Settings, flags: ServeFlags): Promise<Settings> {
  const bot = settings.bot;
  const port = flags.port === undefined ? bot.port : parseCount("--port", flags.port, { min: 1, max: 65535 });
  let defaults = bot.defaults;
  if (flags.samplePayload || bot.samplePayload) {
    const { buildSamplePayload } = await importTestbed(
      "serve --sample-payload",
      () => import("@netstress/testbed/sample-payload/build-sample-payload.ts"),
    );
    const sample = await buildSamplePayload({ outDir: join(resolve(bot.dataDir), "sample-payload") });
    defaults = {
      payload: sample.payload,
      prImage: `oci:${sample.layoutDir}:pr-{tag}`,
      tags: [sample.override.tag],
    };
    process.stderr.write(`netstress serve: sample payload ${sample.payload}\n`);
  }
  return {
    ...settings,
    bot: {
      ...bot,
      port,
      host: flags.host ?? bot.host,
      workers: bot.workers && flags.workers,
      defaults,
    },
  };
}
