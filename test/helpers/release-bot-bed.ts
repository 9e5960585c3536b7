import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import { inject } from "vitest";
import { DEFAULT_REGISTRY_SETTINGS } from "../../src/config/registry-settings.ts";
import { createLocalExecutor } from "../../src/farm/local-executor.ts";
import { createHistoryStore, type HistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import {
  startFakeReleaseController,
  type FakeReleaseController,
} from "@netstress/testbed/sim/start-fake-release-controller.ts";
import { clusterApiExtension } from "./cluster-api-extension.ts";
import type { startTestBot } from "./github-test-bot.ts";
import { pushPayload } from "./oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "./start-registry.ts";
import { tempDir } from "./temp-dir.ts";
import { localImages } from "./local-images.ts";

type TestBotOptions = NonNullable<Parameters<typeof startTestBot>[0]>;

export interface ReleaseBotBed {
  registry: RegistryServer;
  releaseController: FakeReleaseController;
  farmApi: FakeKubeApi;
  dir: string;
  redis: Redis;
  /**
   * Pushes a release payload named `name` whose cluster-api component is the cluster-api extension, has
   * the release controller publish it on `stream`, and returns its pull spec by digest.
   */
  publish(stream: string, name: string): Promise<string>;
  /**
   * What the real bot needs to run on these: the local executor, the bot's own resolve stage reading the
   * registry, the real analysis (with a history of its own unless given one), the release controller and
   * the registry.
   */
  botOptions(farmConfigPath: string, history?: HistoryStore): TestBotOptions;
  stop(): Promise<void>;
}

/** A registry, a release controller and a farm API for end-to-end runs of the real bot on payloads. */
export async function startReleaseBotBed(): Promise<ReleaseBotBed> {
  const [registry, releaseController, farmApi, dir] = await Promise.all([
    startRegistry(),
    startFakeReleaseController(),
    startFakeKubeApi(),
    tempDir("netstress-release-bot-"),
  ]);
  const redis = new Redis(inject("redisUrl"));
  const images = await localImages(join(dir.path, "images"));
  return {
    registry,
    releaseController,
    farmApi,
    dir: dir.path,
    redis,
    publish: async (stream, name) => {
      const { digest } = await pushPayload({
        url: registry.url,
        host: registry.host,
        repository: "ocp/release",
        name,
        releaseTag: name,
        arches: ["amd64"],
        components: [{ tag: "cluster-api", binary: clusterApiExtension() }],
      });
      releaseController.publish(stream, { name, repository: `${registry.host}/ocp/release` });
      return `${registry.host}/ocp/release@${digest}`;
    },
    botOptions: (
      farmConfigPath,
      history = createHistoryStore({ redis, prefix: `release-bot-${randomUUID()}` }),
    ) => ({
      executor: createLocalExecutor({
        arches: ["amd64"],
        cacheDir: join(dir.path, "binaries"),
        images,
      }),
      resolvePlan: "payload",
      analyze: createRunAnalyzer({ history, log: pino({ level: "silent" }) }),
      farm: { configPath: farmConfigPath, clusterTiming: { pollMs: 100, healthPollMs: 200 } },
      gate: { releaseControllerUrl: releaseController.url, parallel: 4, timeoutMinutes: 10 },
      registry: { ...DEFAULT_REGISTRY_SETTINGS, allowedRegistries: [registry.host], allowLoopback: true },
    }),
    stop: async () => {
      await Promise.all([farmApi.stop(), releaseController.stop(), registry.stop()]);
      await dir.remove();
      await redis.quit();
    },
  };
}
