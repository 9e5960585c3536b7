import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Redis } from "ioredis";
import nock from "nock";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startBot, type RunningBot } from "../../src/app/start-bot.ts";
import type { BotSettings } from "../../src/config/bot-settings.ts";
import type { Shard, ShardExecutor } from "../../src/farm/shard-executor.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import { freePort } from "../helpers/free-port.ts";
import { fakeGitHub, type FakeGitHub } from "../helpers/github-api.ts";
import { githubAppKey } from "../helpers/github-app-key.ts";
import { TestOctokit } from "../helpers/github-octokit.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

describe("netstress serve at start-up", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let github: FakeGitHub;
  let redis: Redis;
  let bot: RunningBot | undefined;
  const prefix = `requeue-${randomUUID()}`;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
    dir = await tempDir();
    github = fakeGitHub();
    redis = new Redis(inject("redisUrl"));
  });
  afterAll(async () => {
    await bot?.stop();
    await redis.quit();
    github.stop();
    nock.enableNetConnect();
    await dir.remove();
  });

  it("runs what was accepted but never queued before the last process died, with no farm configured", async () => {
    // Accepted and planned, then the process died before queueing it.
    const run = runRecord({
      plan: { arch: "amd64", arms: [{ arm: "pr", components: [{ component: "sdn", binary: "/b" }] }] },
    });
    await createRunStore({ redis, prefix }).create(run);

    const shards: Shard[] = [];
    const executor: ShardExecutor = {
      name: "local",
      arches: async () => ["amd64"],
      async execute(input) {
        shards.push(input.shard);
        return { status: "completed", resultsPath: join(input.outDir, "results.jsonl"), records: 0 };
      },
    };
    const settings: BotSettings = {
      appId: 31337,
      privateKey: githubAppKey(),
      webhookSecret: "requeue-secret",
      webhookPath: "/api/github/webhooks",
      port: await freePort(),
      host: "127.0.0.1",
      logLevel: "warn",
      githubBaseUrl: "https://api.github.com",
      redisUrl: inject("redisUrl"),
      queuePrefix: prefix,
      publicUrl: "http://bot.test",
      dataDir: join(dir.path, "data"),
      trustedApps: [],
      localArches: ["amd64"],
      runConcurrency: 1,
      defaults: { tags: [] },
      samplePayload: false,
      workers: true,
    };
    bot = await startBot({
      settings,
      log: pino({ level: "silent" }),
      Octokit: TestOctokit,
      executor,
      analyze: async () => ({
        conclusion: "neutral",
        output: { title: "analyzed", summary: "" },
        reportPath: "/report.html",
      }),
    });
    const store = createRunStore({ redis, prefix });
    await expect.poll(async () => (await store.get(run.id))?.state, { timeout: 20_000 }).toBe("completed");
    expect(shards.map((shard) => shard.runId)).toEqual([run.id]);
    expect((await store.get(run.id))?.conclusion).toBe("neutral");
  });
});
