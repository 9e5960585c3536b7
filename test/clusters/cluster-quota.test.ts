import { setTimeout as delay } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acquireClusters, type HeldLeases } from "../../src/queue/acquire-clusters.ts";
import type { ProvisionProgress } from "../../src/runs/clusters-under-test.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { startFakeHive, type FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import { startRedis, type RedisServer } from "../helpers/start-redis.ts";
import { botObjects, hiveProvider, PR, seedHub } from "./hive-fixture.ts";

// Three bot replicas, each with its own Redis connection and lease keeper, share one Hive source
// whose quota is smaller than two runs together.
const REPLICAS = 3;
const MAX_CLUSTERS = 4;
const PER_RUN = 3;

let redisServer: RedisServer;
let hive: FakeHive;
const clients: Redis[] = [];

beforeAll(async () => {
  redisServer = await startRedis();
  for (let i = 0; i < REPLICAS; i++) clients.push(new Redis(redisServer.url));
  hive = await startFakeHive({ installMs: 10 });
  seedHub(hive);
});
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await hive.stop();
  await redisServer.stop();
});

const replicas = (prefix: string) =>
  clients.map((redis) =>
    hiveProvider({
      hubKubeconfig: hive.hub.kubeconfigPath,
      redis,
      prefix,
      maxClusters: MAX_CLUSTERS,
      timing: { pollMs: 20, healthPollMs: 60_000, lostAfterFailures: 3 },
    }),
  );

const run = (
  provider: ReturnType<typeof hiveProvider>,
  runId: string,
  kind: "pr" | "gate" | "periodic",
  signal: AbortSignal,
  onProgress?: (progress: ProvisionProgress) => void,
): Promise<HeldLeases> =>
  acquireClusters({
    provider,
    runId,
    arch: "arm64",
    arms: [{ arm: "pr", payload: PR }],
    count: PER_RUN,
    kind,
    signal,
    ...(onProgress ? { onProgress } : {}),
  });

/** Gives a run's clusters back one at a time, as iterations finish on them. */
async function releaseOneByOne(held: HeldLeases, gapMs: () => number): Promise<void> {
  for (const lease of held.byArm.pr ?? []) {
    await delay(gapMs());
    await lease.release();
  }
}

describe("Hive quota shared by replicas", () => {
  it(`serves runs wanting ${PER_RUN} of ${MAX_CLUSTERS} clusters without deadlock in 50 seeded trials`, async () => {
    const providers = replicas("quota-trials");
    try {
      for (let trial = 0; trial < 50; trial++) {
        const random = seededRandom(`quota trial ${trial}`);
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(new Error("deadlock")), 20_000);
        const outcomes = await Promise.allSettled(
          providers.map(async (provider, replica) => {
            await delay(Math.floor(random() * 20));
            const held = await run(provider, `t${trial}-r${replica}`, "pr", abort.signal);
            expect(held.byArm.pr).toHaveLength(PER_RUN);
            await releaseOneByOne(held, () => Math.floor(random() * 15));
          }),
        );
        clearTimeout(timer);
        const stuck = outcomes.flatMap((o, replica) =>
          o.status === "rejected" ? [`replica ${replica}: ${(o.reason as Error).message}`] : [],
        );
        expect(stuck, `trial ${trial}`).toEqual([]);
      }
      // The last slots come back once Hive has removed their objects (its finalizers), a poll later.
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
      await expect
        .poll(() => clients[0]!.zcard("quota-trials:clusters:leases:hive"), { timeout: 10_000 })
        .toBe(0);
    } finally {
      for (const provider of providers) provider.stop();
    }
  }, 600_000);

  it("starts a gate queued behind a PR run first when clusters come back", async () => {
    const [first, second, third] = replicas("quota-priority");
    try {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error("deadlock")), 30_000);
      const holding = await run(first!, "holding-pr", "pr", abort.signal);
      const order: string[] = [];
      let prPhase = "";
      const waitingPr = run(second!, "waiting-pr", "pr", abort.signal, (p) => (prPhase = p.phase)).then(
        (held) => {
          order.push("waiting-pr");
          return held;
        },
      );
      // The PR run waits for the quota before the gate asks.
      await expect.poll(() => prPhase, { timeout: 10_000 }).toBe("queued");
      let gatePhase = "";
      const gate = run(third!, "gate", "gate", abort.signal, (p) => (gatePhase = p.phase)).then((held) => {
        order.push("gate");
        return held;
      });
      // Clusters come back only once the gate waits behind the PR run.
      await expect.poll(() => gatePhase, { timeout: 10_000 }).toBe("queued");
      await releaseOneByOne(holding, () => 20);
      const gateHeld = await gate;
      expect(order).toEqual(["gate"]);
      await releaseOneByOne(gateHeld, () => 20);
      await releaseOneByOne(await waitingPr, () => 0);
      clearTimeout(timer);
      expect(order).toEqual(["gate", "waiting-pr"]);
    } finally {
      for (const provider of [first, second, third]) provider!.stop();
    }
  }, 120_000);
});
