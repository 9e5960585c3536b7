import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import nock from "nock";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildSamplePayload } from "@netstress/testbed/sample-payload/build-sample-payload.ts";
import { REGRESSED_TEST } from "@netstress/testbed/sample-ext/suites.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { DEFAULT_QUOTAS, type BotSettings } from "../../src/config/bot-settings.ts";
import { startBot, type RunningBot } from "../../src/server/start-bot.ts";
import { botTestSettings } from "../helpers/bot-test-settings.ts";
import { createLocalExecutor } from "../../src/farm/local-executor.ts";
import { freePort } from "../helpers/free-port.ts";
import { eventually, fakeGitHub, type FakeGitHub } from "../helpers/github-api.ts";
import { githubAppKey } from "../helpers/github-app-key.ts";
import { deliverWebhook } from "../helpers/github-deliveries.ts";
import { TestOctokit } from "../helpers/github-octokit.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { localImages } from "../helpers/local-images.ts";

const SECRET = "e2e-webhook-secret";
const APP_ID = 31337;
const arch = hostArch();

describe("netstress serve, end to end", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bot: RunningBot;
  let github: FakeGitHub;
  let redis: Redis;
  let webhookUrl: string;
  const prefix = `e2e-${randomUUID()}`;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
    dir = await tempDir();
    const sample = await buildSamplePayload({ outDir: join(dir.path, "payload"), arches: [arch] });
    github = fakeGitHub({ members: ["alice"] });
    const settings: BotSettings = {
      appId: APP_ID,
      privateKey: githubAppKey(),
      webhookSecret: SECRET,
      streamSecret: SECRET,
      runIdSecret: "test-run-id-key",
      webhookPath: "/api/github/webhooks",
      port: await freePort(),
      host: "127.0.0.1",
      internalPort: 0,
      internalHost: "127.0.0.1",
      logLevel: "warn",
      githubBaseUrl: "https://api.github.com",
      redisUrl: inject("redisUrl"),
      queuePrefix: prefix,
      publicUrl: "http://bot.test",
      dataDir: join(dir.path, "data"),
      trustedApps: [],
      localArches: [arch],
      runConcurrency: 1,
      quotas: DEFAULT_QUOTAS,
      defaults: {
        payload: sample.payload,
        prImage: `oci:${sample.layoutDir}:pr-{tag}`,
        tags: ["ovn-kubernetes"],
      },
      samplePayload: false,
      workers: true,
    };
    bot = await startBot(botTestSettings(settings), {
      log: pino({ level: "silent" }),
      Octokit: TestOctokit,
      // Fixed outcomes of the sample tests, instantly.
      executor: createLocalExecutor({
        arches: [arch],
        cacheDir: join(dir.path, "binaries"),
        images: await localImages(join(dir.path, "images")),
        env: { ...process.env, SAMPLE_EXT_SEED: "e2e", SAMPLE_EXT_TIME_SCALE: "0" },
      }),
      progressIntervalMs: 100,
    });
    webhookUrl = `${bot.url}/api/github/webhooks`;
    redis = new Redis(inject("redisUrl"));
  });

  afterAll(async () => {
    await bot?.stop();
    await redis?.quit();
    github?.stop();
    nock.enableNetConnect();
    await dir?.remove();
  });

  it("answers a badly signed delivery with an error and queues nothing", async () => {
    const payload = commentPayload({ body: "/test network-stress" });
    const forged = await deliverWebhook({
      url: webhookUrl,
      secret: "not-the-secret",
      name: "issue_comment",
      payload,
    });
    expect([400, 401]).toContain(forged.status);
    const unsigned = await deliverWebhook({
      url: webhookUrl,
      secret: SECRET,
      name: "issue_comment",
      payload,
      signature: "sha256=00",
    });
    expect([400, 401]).toContain(unsigned.status);
    await new Promise((r) => setTimeout(r, 200));
    const intake = new Queue("intake", { connection: redis, prefix });
    expect(await intake.getJobCounts()).toMatchObject({
      waiting: 0,
      active: 0,
      completed: 0,
      failed: 0,
      delayed: 0,
    });
    await intake.close();
    expect(github.writes).toEqual([]);
  });

  it("turns a signed /test comment into a check run that ends with the analysis", async () => {
    const started = Date.now();
    const response = await deliverWebhook({
      url: webhookUrl,
      secret: SECRET,
      name: "issue_comment",
      payload: commentPayload({
        body: "LGTM, let's see\n/test network-stress iterations=16 focus=NodePort",
        author: "alice",
      }),
    });
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);

    const final = await eventually(() => {
      const runs = [...github.latestCheckRuns().values()];
      return runs.find((r) => r.status === "completed");
    }, 60_000);
    expect(final).toMatchObject({
      name: `network-stress (${arch})`,
      status: "completed",
      conclusion: "failure",
      details_url: expect.stringMatching(/^http:\/\/bot\.test\/runs\/[0-9a-f]{32}$/),
    });
    const output = final.output as { title: string; summary: string; text: string };
    expect(output.title).toMatch(new RegExp(`^1 regression — 1 tests × 16 runs, ${arch}$`));
    const row = output.summary
      .split("\n")
      .find((line) => line.includes("NodePort service should be reachable"));
    expect(row).toMatch(/^\| regression \|/);
    expect(REGRESSED_TEST).toContain("NodePort service should be reachable");

    // The check run went queued → in_progress → completed, with the buttons of each state.
    const statuses = github.checkRunWrites().map((w) => w.body.status);
    expect(statuses[0]).toBe("queued");
    expect(statuses).toContain("in_progress");
    expect(statuses.at(-1)).toBe("completed");
    expect((final.actions as { identifier: string }[]).map((a) => a.identifier)).toEqual(["rerun", "more"]);

    // The details page is the HTML report.
    const page = await fetch(`${bot.url}${new URL(String(final.details_url)).pathname}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain("NodePort service should be reachable");
  });

  it("answers /healthz and /readyz", async () => {
    expect((await fetch(`${bot.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${bot.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toBe("ready\n");
  });
});
