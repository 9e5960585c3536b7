import { join } from "node:path";
import { startFakeHive, type ClusterFor, type FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import {
  startFakeKubeApi,
  type FakeImage,
  type FakeKubeApi,
} from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { RELEASED, seedHub, writeHiveFarmConfig } from "../clusters/hive-fixture.ts";
import { bothArmsPlan } from "./both-arms-plan.ts";
import { startTestBot, type TestBot } from "./github-test-bot.ts";
import { tempDir } from "./temp-dir.ts";

export interface HiveBotBed {
  hive: FakeHive;
  farmApi: FakeKubeApi;
  /**
   * The bot with its clusters under test from the simulated Hive: the farm configuration written, the hub
   * polled every 100 ms (not every 10 s, so installs are seen as they end), both arms planned on the
   * released payload (see bothArmsPlan). `options` are startTestBot's; their settings add to these.
   */
  startBot(options?: Parameters<typeof startTestBot>[0]): Promise<TestBot>;
  stop(): Promise<void>;
}

/** A simulated Hive hub seeded with a pool of the released payload, and a simulated farm API. */
export async function startHiveBotBed(options: {
  installMs: number;
  poolSize?: number;
  /** What each simulated cluster runs besides its payload (e.g. how long its upgrades take). */
  clusterFor?: ClusterFor;
  /** The Hive source's upgradeSeconds (crossover by upgrade). */
  upgradeSeconds?: number;
  /** The Hive source's quota (default 8). */
  maxClusters?: number;
  /** What the farm's pods run, by image (its runner's is FARM_RUNNER_IMAGE); default none. */
  farmImages?: Record<string, FakeImage>;
}): Promise<HiveBotBed> {
  const hive = await startFakeHive({
    installMs: options.installMs,
    ...(options.clusterFor ? { clusterFor: options.clusterFor } : {}),
  });
  seedHub(hive, options.poolSize === undefined ? {} : { poolSize: options.poolSize });
  const farmApi = await startFakeKubeApi(options.farmImages ? { images: options.farmImages } : {});
  const dir = await tempDir("netstress-hive-bot-");
  const configPath = join(dir.path, "farm.yaml");
  await writeHiveFarmConfig({
    path: configPath,
    farmKubeconfig: farmApi.kubeconfigPath,
    hubKubeconfig: hive.hub.kubeconfigPath,
    readySeconds: 120,
    ...(options.upgradeSeconds !== undefined ? { upgradeSeconds: options.upgradeSeconds } : {}),
    ...(options.maxClusters !== undefined ? { maxClusters: options.maxClusters } : {}),
  });
  return {
    hive,
    farmApi,
    startBot: (botOptions = {}) =>
      startTestBot({
        farm: { configPath, clusterTiming: { pollMs: 100 } },
        resolvePlan: bothArmsPlan(),
        ...botOptions,
        settings: { defaults: { payload: RELEASED, tags: [] }, ...botOptions.settings },
      }),
    stop: async () => {
      await Promise.all([hive.stop(), farmApi.stop()]);
      await dir.remove();
    },
  };
}
