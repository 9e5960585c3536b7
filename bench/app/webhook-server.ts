import { DEFAULT_QUOTAS } from "../../src/config/bot-settings.ts";
/**
 * One webhook server for the acknowledgement benchmark, in its own process:
 *   node --import tsx bench/app/webhook-server.ts netstress|bare PORT REDIS_URL PRIVATE_KEY_FILE SECRET
 * `netstress` is the bot's web side (startBot without workers: handlers claim and queue into Redis);
 * `bare` is a Probot app whose handler does nothing. Prints "ready" once listening.
 */
import { readFile } from "node:fs/promises";
import { pino } from "pino";
import { Probot, Server } from "probot";
import { startBot } from "../../src/server/start-bot.ts";
import { botTestSettings } from "../../test/helpers/bot-test-settings.ts";

const [kind, port, redisUrl, keyFile, secret] = process.argv.slice(2);
const privateKey = await readFile(keyFile!, "utf8");
const log = pino({ level: "warn" });

if (kind === "netstress") {
  await startBot(
    botTestSettings({
      appId: 1,
      privateKey,
      webhookSecret: secret!,
      streamSecret: secret!,
      runIdSecret: "test-run-id-key",
      webhookPath: "/api/github/webhooks",
      port: Number(port),
      host: "127.0.0.1",
      internalPort: 0,
      internalHost: "127.0.0.1",
      logLevel: "warn",
      githubBaseUrl: "https://api.github.com",
      redisUrl: redisUrl!,
      queuePrefix: "bench",
      publicUrl: "http://127.0.0.1",
      dataDir: "/tmp/netstress-bench-app",
      trustedApps: [],
      localArches: ["amd64"],
      runConcurrency: 1,
      quotas: DEFAULT_QUOTAS,
      defaults: { tags: [] },
      samplePayload: false,
      workers: false,
    }),
    { log },
  );
} else {
  const server = new Server({
    Probot: Probot.defaults({ appId: 1, privateKey, secret: secret!, log }),
    port: Number(port),
    host: "127.0.0.1",
    log,
  });
  await server.load((app) => {
    app.on("issue_comment.created", async () => {});
  });
  await server.start();
}
process.stdout.write("ready\n");
