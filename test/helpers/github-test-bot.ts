import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import nock from "nock";
import { pino } from "pino";
import { inject } from "vitest";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { ClusterTiming } from "../../src/clusters/cluster-source.ts";
import type { GateSettings } from "../../src/config/gate-settings.ts";
import type { RegistrySettings } from "../../src/config/registry-settings.ts";
import { startBot, type BotSeams, type RunningBot } from "../../src/server/start-bot.ts";
import { botTestSettings } from "./bot-test-settings.ts";
import { DEFAULT_QUOTAS, type BotSettings } from "../../src/config/bot-settings.ts";
import type { ExecuteShardInput, ShardExecutor, ShardOutcome } from "../../src/runs/shard-executor.ts";
import type { ResolveRunPlan } from "../../src/runs/plan-resolver.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import { createRunStore, type RunStore } from "../../src/queue/run-store.ts";
import { eventually, fakeGitHub, type FakeGitHub, type FakeGitHubOptions } from "./github-api.ts";
import { githubAppKey } from "./github-app-key.ts";
import { freePort } from "./free-port.ts";
import { deliverWebhook, type WebhookDeliveryLog } from "./github-deliveries.ts";
import { TestOctokit } from "./github-octokit.ts";
import { tempDir } from "./temp-dir.ts";

export const TEST_APP_ID = 4711;
export const TEST_SECRET = "test-webhook-secret";

/** A shard executor the test drives: shards run until the test finishes them or they are aborted. */
export function controlledExecutor(arches: readonly Arch[] = ["amd64", "arm64"]) {
  const running = new Map<string, { input: ExecuteShardInput; finish: (outcome: ShardOutcome) => void }>();
  const executor: ShardExecutor = {
    name: "test",
    arches: async () => arches,
    execute: (input) =>
      new Promise<ShardOutcome>((resolve) => {
        const resultsPath = join(input.outDir, "results.jsonl");
        const finish = (outcome: ShardOutcome) => {
          running.delete(input.shard.runId);
          resolve(outcome);
        };
        const cancel = () => finish({ status: "cancelled", resultsPath, records: 0 });
        if (input.signal.aborted) return cancel();
        running.set(input.shard.runId, { input, finish });
        input.signal.addEventListener("abort", cancel);
      }),
  };
  return {
    executor,
    running,
    /** Completes a running shard with an (empty) results file. */
    async complete(runId: string) {
      const shard = running.get(runId);
      if (!shard) throw new Error(`no shard of ${runId} is running`);
      await mkdir(shard.input.outDir, { recursive: true });
      const resultsPath = join(shard.input.outDir, "results.jsonl");
      await writeFile(resultsPath, "");
      shard.finish({ status: "completed", resultsPath, records: 0 });
    },
  };
}

/** A resolver that answers a one-component plan at once (or what `answer` says). */
export function fixedResolver(answer?: ResolveRunPlan): ResolveRunPlan {
  return (
    answer ??
    (async ({ run }) => ({
      kind: "ready",
      plan: {
        arch: run.arch,
        arms: [
          {
            arm: "pr",
            components: [{ component: "ovn-kubernetes", binary: "/nonexistent", source: "override" }],
          },
        ],
      },
    }))
  );
}

/** An analysis that reports what it was given, so tests can see which shards were analyzed. */
export const countingAnalyzer: AnalyzeRunResults = async ({ resultsPaths, outDir }) => ({
  conclusion: "success",
  output: { title: `analyzed ${resultsPaths.length} shard(s)`, summary: resultsPaths.join("\n") },
  reportPath: join(outDir, "report.html"),
});

export interface TestBot {
  bot: RunningBot;
  github: FakeGitHub;
  store: RunStore;
  redis: Redis;
  settings: BotSettings;
  deliver(name: string, payload: object, id?: string): Promise<Response>;
  /** Waits until `count` intake jobs (deliveries that mattered) have been handled. */
  intakeHandled(count: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The real bot (Probot server, BullMQ workers, Redis) on a free loopback port, with GitHub faked at
 * the HTTP boundary and the run's ports (executor, resolver, analysis) supplied by the test.
 */
export async function startTestBot(
  options: {
    github?: FakeGitHubOptions;
    settings?: Partial<BotSettings>;
    /** GitHub's record of delivery attempts, served by the fake deliveries API. */
    deliveries?: WebhookDeliveryLog;
    /** "payload": the bot's own resolve stage, which reads the payloads from their registry. */
    resolvePlan?: BotSeams["resolvePlan"] | "payload";
    gate?: GateSettings;
    registry?: RegistrySettings;
    /** NETSTRESS_FARM_CONFIG, and how often the clusterSources are polled. */
    farm?: { configPath: string; clusterTiming?: Partial<ClusterTiming> };
    /** NETSTRESS_PERIODICS_CONFIG. */
    periodicsConfigPath?: string;
    /** "farm": the bot's own build-farm executor (`farm` above); default: a controlledExecutor's. */
    executor?: ShardExecutor | "farm";
  } & Pick<BotSeams, "analyze" | "imageWaitStepMs" | "deliveryRecovery" | "progressIntervalMs"> = {},
): Promise<TestBot> {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  const dir = await tempDir();
  const redisUrl = inject("redisUrl");
  const settings: BotSettings = {
    appId: TEST_APP_ID,
    privateKey: githubAppKey(),
    webhookSecret: TEST_SECRET,
    streamSecret: TEST_SECRET,
    runIdSecret: "test-run-id-key",
    webhookPath: "/api/github/webhooks",
    // Probot's server treats port 0 as "use 3000".
    port: await freePort(),
    host: "127.0.0.1",
    internalPort: 0,
    internalHost: "127.0.0.1",
    logLevel: "warn",
    githubBaseUrl: "https://api.github.com",
    redisUrl,
    queuePrefix: `t-${randomUUID()}`,
    publicUrl: "http://bot.test",
    dataDir: dir.path,
    trustedApps: [],
    localArches: ["amd64"],
    runConcurrency: 4,
    quotas: DEFAULT_QUOTAS,
    defaults: { payload: "quay.io/openshift-release-dev/ocp-release:4.18.0-multi", tags: [] },
    samplePayload: false,
    workers: true,
    ...options.settings,
  };
  const github = fakeGitHub({
    ...options.github,
    ...(options.deliveries
      ? {
          deliveries: {
            log: options.deliveries,
            webhookUrl: `http://127.0.0.1:${settings.port}${settings.webhookPath}`,
            appId: settings.appId,
          },
        }
      : {}),
  });
  const bot = await startBot(
    botTestSettings(settings, {
      ...(options.gate ? { gate: options.gate } : {}),
      ...(options.registry ? { registry: options.registry } : {}),
      ...(options.farm ? { farmConfigPath: options.farm.configPath } : {}),
      ...(options.periodicsConfigPath ? { periodicsConfigPath: options.periodicsConfigPath } : {}),
    }),
    {
      // NETSTRESS_TEST_LOG=debug shows what the bot does while a test runs.
      log: pino({ level: process.env.NETSTRESS_TEST_LOG ?? "silent" }),
      Octokit: TestOctokit,
      ...(options.executor === "farm" ? {} : { executor: options.executor ?? controlledExecutor().executor }),
      ...(options.resolvePlan === "payload" ? {} : { resolvePlan: options.resolvePlan ?? fixedResolver() }),
      analyze: options.analyze ?? countingAnalyzer,
      progressIntervalMs: options.progressIntervalMs ?? 50,
      ...(options.imageWaitStepMs !== undefined ? { imageWaitStepMs: options.imageWaitStepMs } : {}),
      ...(options.farm?.clusterTiming ? { clusterTiming: options.farm.clusterTiming } : {}),
      ...(options.deliveryRecovery ? { deliveryRecovery: options.deliveryRecovery } : {}),
    },
  );
  const redis = new Redis(redisUrl);
  const intake = new Queue("intake", { connection: redis, prefix: settings.queuePrefix });
  return {
    bot,
    github,
    redis,
    settings,
    store: createRunStore({ redis, prefix: settings.queuePrefix }),
    deliver: (name, payload, id) =>
      deliverWebhook({
        url: `${bot.url}${settings.webhookPath}`,
        secret: TEST_SECRET,
        name,
        payload,
        ...(id ? { id } : {}),
      }),
    intakeHandled: (count) =>
      eventually(async () => {
        const counts = await intake.getJobCounts("completed", "failed");
        return (counts.completed ?? 0) + (counts.failed ?? 0) >= count;
      }).then(() => undefined),
    async stop() {
      await intake.close();
      await bot.stop();
      await redis.quit();
      github.stop();
      nock.enableNetConnect();
      await dir.remove();
    },
  };
}
