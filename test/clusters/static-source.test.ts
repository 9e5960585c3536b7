import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterLeaseLapsed } from "../../src/clusters/cluster-lease-lapsed.ts";
import { createClusterLeases } from "../../src/clusters/cluster-leases.ts";
import { createClusterProvider } from "../../src/clusters/create-cluster-provider.ts";
import { clusterSourcesSchema, type ClusterSourceConfig } from "../../src/clusters/cluster-sources-config.ts";
import { ClustersUnavailableError } from "../../src/runs/clusters-unavailable-error.ts";
import { acquireClusters } from "../../src/queue/acquire-clusters.ts";
import type { ClusterProvider, ClusterRequest } from "../../src/runs/clusters-under-test.ts";
import { acquireArm } from "./hive-fixture.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import {
  startSimulatedCluster,
  type SimulatedCluster,
} from "@netstress/testbed/sim/start-simulated-cluster.ts";
import { startRedis, type RedisServer } from "../helpers/start-redis.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const RELEASED = `quay.io/openshift-release-dev/ocp-release@sha256:${"a".repeat(64)}`;
const PR = `registry.example/netstress/pr-payload@sha256:${"b".repeat(64)}`;
const logger = pino({ level: "silent" });

const clusterRunning = (payload: string, upgradeMs = 300): Promise<SimulatedCluster> =>
  startSimulatedCluster({ arch: "amd64", payload, upgradeMs });

let redisServer: RedisServer;
let redis: Redis;
let dir: Awaited<ReturnType<typeof tempDir>>;
let released: SimulatedCluster[];
let prCluster: SimulatedCluster;
let secrets: FakeKubeApi;

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  dir = await tempDir();
  released = await Promise.all([clusterRunning(RELEASED), clusterRunning(RELEASED)]);
  prCluster = await clusterRunning(PR);
  // The third cluster's kubeconfig is in a Secret on another cluster, as in production.
  secrets = await startFakeKubeApi({ tls: true });
  secrets.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "lab-pr", namespace: "netstress" },
    data: { kubeconfig: Buffer.from(prCluster.kubeconfig).toString("base64") },
  });
  await writeFile(join(dir.path, "secrets-kubeconfig"), secrets.kubeconfig);
});
afterAll(async () => {
  await Promise.all([...released, prCluster, secrets].map((c) => c.stop()));
  redis.disconnect();
  await redisServer.stop();
  await dir.remove();
});

function provider(options: { shared?: number; prefix?: string; leaseMs?: number; reinstall?: boolean } = {}) {
  const sources: ClusterSourceConfig[] = clusterSourcesSchema.parse([
    {
      type: "static",
      name: "lab",
      reinstall: options.reinstall ?? false,
      secretsFrom: join(dir.path, "secrets-kubeconfig"),
      clusters: [
        {
          name: "rel-1",
          arch: "amd64",
          kubeconfig: released[0]!.kubeconfigPath,
          shared: options.shared ?? 1,
        },
        { name: "rel-2", arch: "amd64", kubeconfig: released[1]!.kubeconfigPath },
        { name: "pr-1", arch: "amd64", kubeconfigSecret: { namespace: "netstress", name: "lab-pr" } },
      ],
    },
  ]);
  return createClusterProvider({
    sources: () => sources,
    ...leasesFor(options.prefix ?? `t${Math.random().toString(36).slice(2, 8)}`, options.leaseMs),
    logger,
    timing: { pollMs: 50, healthPollMs: 100, lostAfterFailures: 2 },
    timeoutMs: 2000,
  });
}

/** The bot's Redis leases under a prefix (replicas sharing one prefix see each other's). */
const leasesFor = (prefix: string, leaseMs = 30_000) => ({
  leases: createClusterLeases({ redis, prefix, leaseMs }),
  prefix,
});

const request = (overrides: Partial<ClusterRequest> = {}): ClusterRequest => ({
  runId: "run-1",
  arm: "baseline",
  arch: "amd64",
  payload: RELEASED,
  count: 2,
  signal: new AbortController().signal,
  ...overrides,
});

/** One cluster for a run's baseline arm, asked as the execute stage asks. */
const baselineOf = async (clusters: ClusterProvider, runId: string) =>
  (
    await acquireClusters({
      provider: clusters,
      runId,
      arch: "amd64",
      arms: [{ arm: "baseline", payload: RELEASED }],
      count: 1,
      signal: new AbortController().signal,
    })
  ).byArm.baseline ?? [];

describe("static cluster source", () => {
  it("tells a holder whose lease lapsed that its cluster is lost, and never books a shared: 1 cluster twice", async () => {
    const prefix = `t${Math.random().toString(36).slice(2, 8)}`;
    const stalled = provider({ prefix, leaseMs: 900 });
    const other = provider({ prefix, leaseMs: 900 });
    try {
      const [lease] = await baselineOf(stalled, "run-1");
      expect(lease!.cluster.id).toBe("lab/rel-1");
      // The replica stalls past its lease (event loop blocked, Redis unreachable): the lease lapses.
      const pool = `${prefix}:clusters:leases:lab/rel-1`;
      for (const member of await redis.zrange(pool, 0, -1)) await redis.zadd(pool, 1, member);
      const [taken] = await baselineOf(other, "run-2");
      expect(taken!.cluster.id).toBe("lab/rel-1");
      // The stalled replica's next renewal learns the lease is gone instead of taking it back.
      await expect.poll(() => lease!.lost.aborted, { timeout: 5000 }).toBe(true);
      expect(lease!.lost.reason).toBeInstanceOf(ClusterLeaseLapsed);
      const holders = (await redis.zrange(pool, 0, -1)).map((m) => m.split("|")[0]);
      expect(holders).toEqual(["run-2"]);
      await lease!.release();
      await taken!.release();
    } finally {
      stalled.stop();
      other.stop();
    }
  });

  it("serves a crossover, which moves its clusters itself, only clusters with upgrade: true, and says why not the others", async () => {
    const movable = await clusterRunning(RELEASED);
    const sources = (moving: boolean) =>
      clusterSourcesSchema.parse([
        {
          type: "static",
          name: "lab",
          reinstall: true,
          clusters: [
            { name: "fixed", arch: "amd64", kubeconfig: released[0]!.kubeconfigPath },
            { name: "movable", arch: "amd64", kubeconfig: movable.kubeconfigPath, upgrade: moving },
          ],
        },
      ]);
    const providerOf = (moving: boolean) =>
      createClusterProvider({
        sources: () => sources(moving),
        ...leasesFor(`t${Math.random().toString(36).slice(2, 8)}`),
        logger,
        timing: { pollMs: 50, healthPollMs: 100, lostAfterFailures: 2 },
        timeoutMs: 2000,
      });
    const crossover = (count: number) => ({
      runId: "run-crossover",
      arch: "amd64" as const,
      arms: [{ arm: "pr" as const, payload: RELEASED, upgradeTarget: PR, moves: true }],
      count,
      signal: new AbortController().signal,
    });
    const none = providerOf(false);
    const some = providerOf(true);
    try {
      expect(none.movesClusters?.()).toBe(false);
      expect(some.movesClusters?.()).toBe(true);
      // A crossover plans its batches within what may be moved at once: the one movable cluster.
      expect(none.movableAtOnce?.()).toBe(0);
      expect(some.movableAtOnce?.()).toBe(1);
      const refused = await none.acquire(crossover(1)).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ClustersUnavailableError);
      expect((refused as Error).message).toContain(
        "fixed may not be moved to another payload (upgrade: false)",
      );
      const [lease] = (await some.acquire(crossover(1))).pr!;
      expect(lease!.cluster.id).toBe("lab/movable");
      expect(lease!.upgrade).toBeTypeOf("function");
      await lease!.release();
    } finally {
      none.stop();
      some.stop();
      await movable.stop();
    }
  });

  it("hands out the clusters whose ClusterVersion runs the arm's payload, by digest", async () => {
    const clusters = provider({ reinstall: true });
    try {
      const leases = await acquireArm(clusters, request());
      expect(leases.map((l) => l.cluster.id).sort()).toEqual(["lab/rel-1", "lab/rel-2"]);
      expect(await leases[0]!.cluster.kubeconfig()).toContain("certificate-authority-data");
      // The same payload from another repository is the same payload.
      const pr = await acquireArm(
        clusters,
        request({ arm: "pr", count: 1, payload: `quay.io/mirror/pr@sha256:${"b".repeat(64)}` }),
      );
      expect(pr.map((l) => l.cluster.id)).toEqual(["lab/pr-1"]);
      expect(await pr[0]!.cluster.kubeconfig()).toBe(prCluster.kubeconfig);
      await Promise.all([...leases, ...pr].map((l) => l.release()));
    } finally {
      clusters.stop();
    }
  });

  it("refuses a cluster running another payload, saying what it runs", async () => {
    const clusters = provider();
    try {
      const error = await acquireArm(clusters, request({ payload: PR, count: 2 })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ClustersUnavailableError);
      expect((error as Error).message).toMatch(/1 of 2 amd64 clusters/);
      expect((error as Error).message).toContain(`rel-1 runs ${RELEASED} (upgrade: false)`);
      // All or nothing: the one it had is free again.
      const again = await acquireArm(clusters, request({ runId: "run-2", payload: PR, count: 1 }));
      expect(again.map((l) => l.cluster.id)).toEqual(["lab/pr-1"]);
      await again[0]!.release();
    } finally {
      clusters.stop();
    }
  });

  it("leases a cluster to one arm of one run unless it is shared, and every replica sees the leases", async () => {
    const prefix = "shared-test";
    const first = provider({ prefix });
    const second = provider({ prefix });
    try {
      const held = await acquireArm(first, request({ count: 2 }));
      const refused = await acquireArm(second, request({ runId: "run-2", count: 1 })).catch(
        (e: unknown) => e,
      );
      expect((refused as Error).message).toMatch(
        /rel-1 is in use by other runs; rel-2 is in use by other runs/,
      );
      await held[0]!.release();
      await held[0]!.release(); // idempotent
      const freed = await acquireArm(second, request({ runId: "run-2", count: 1 }));
      expect(freed).toHaveLength(1);
      await Promise.all([...held, ...freed].map((l) => l.release()));
    } finally {
      first.stop();
      second.stop();
    }
    const sharing = provider({ prefix: "sharing", shared: 2 });
    try {
      const a = await acquireArm(sharing, request({ runId: "run-a", count: 1 }));
      const b = await acquireArm(sharing, request({ runId: "run-b", count: 1 }));
      expect(a[0]!.cluster.id).toBe("lab/rel-1");
      expect(b[0]!.cluster.id).toBe("lab/rel-1");
      await Promise.all([...a, ...b].map((l) => l.release()));
    } finally {
      sharing.stop();
    }
  });

  it("gives back at start-up the leases of runs that are no longer active", async () => {
    const prefix = "reconcile-test";
    const crashed = provider({ prefix });
    await acquireArm(crashed, request({ runId: "ended", count: 1 }));
    const kept = await acquireArm(crashed, request({ runId: "active", count: 1 }));
    crashed.stop(); // a bot that died without releasing
    const restarted = provider({ prefix });
    try {
      expect(await restarted.reconcile(async () => new Set(["active"]))).toEqual({ released: 1 });
      // The ended run's cluster is free; the active run's is still held, and it gets it back.
      const other = await acquireArm(restarted, request({ runId: "new", count: 1 }));
      expect(other[0]!.cluster.id).not.toBe(kept[0]!.cluster.id);
      const resumed = await acquireArm(restarted, request({ runId: "active", count: 1 }));
      expect(resumed[0]!.cluster.id).toBe(kept[0]!.cluster.id);
      await Promise.all([...other, ...resumed].map((l) => l.release()));
    } finally {
      restarted.stop();
    }
  });

  it("moves a cluster with upgrade: true to the arm's payload and waits until the upgrade completed", async () => {
    const movable = await clusterRunning(RELEASED, 400);
    const sources = clusterSourcesSchema.parse([
      {
        type: "static",
        name: "lab",
        clusters: [{ name: "movable", arch: "amd64", kubeconfig: movable.kubeconfigPath, upgrade: true }],
      },
    ]);
    const clusters = createClusterProvider({
      sources: () => sources,
      ...leasesFor("upgrade-test"),
      logger,
      timing: { pollMs: 50, healthPollMs: 100, lostAfterFailures: 2 },
      timeoutMs: 2000,
    });
    try {
      const phases: string[] = [];
      const [lease] = await acquireArm(
        clusters,
        request({ payload: PR, count: 1, onProgress: (p) => phases.push(p.phase) }),
      );
      expect(movable.payload()).toBe(PR);
      expect(lease!.cluster.payload).toBe(PR);
      expect(phases[0]).toBe("upgrading");
      expect(phases.at(-1)).toBe("ready");
      // While the run holds it, nobody moves it back.
      const refused = await acquireArm(
        clusters,
        request({ runId: "run-2", payload: RELEASED, count: 1 }),
      ).catch((e: unknown) => e);
      expect((refused as Error).message).toMatch(/movable runs .*sha256:b+/);
      await lease!.release();
      // An abort during an upgrade gives the cluster back.
      const abort = new AbortController();
      const pending = acquireArm(
        clusters,
        request({
          runId: "run-3",
          payload: RELEASED,
          count: 1,
          signal: abort.signal,
          onProgress: (p) => p.phase === "upgrading" && abort.abort(new Error("run aborted")),
        }),
      );
      await expect(pending).rejects.toThrow(/aborted/);
      const after = await acquireArm(clusters, request({ runId: "run-4", payload: PR, count: 1 }));
      expect(after).toHaveLength(1);
      await after[0]!.release();
    } finally {
      clusters.stop();
      await movable.stop();
    }
  });

  it("keeps an upgrade run's lease while its own [Upgrade] test moves the cluster to the arm's target, and loses it to any other payload", async () => {
    const upgrading = await clusterRunning(RELEASED, 100);
    const sources = clusterSourcesSchema.parse([
      {
        type: "static",
        name: "lab",
        clusters: [{ name: "upgrading", arch: "amd64", kubeconfig: upgrading.kubeconfigPath }],
      },
    ]);
    const clusters = createClusterProvider({
      sources: () => sources,
      ...leasesFor("upgrade-target-test"),
      logger,
      timing: { pollMs: 50, healthPollMs: 50, lostAfterFailures: 2 },
      timeoutMs: 2000,
    });
    // What the [Upgrade] test does (netstress-network-tests' upgradeCluster): a forced desiredUpdate.
    const requestUpdate = (image: string) =>
      upgrading.api.store.update("clusterversions", "", "version", (o) => {
        o.spec = { ...o.spec, desiredUpdate: { image, version: "", force: true } };
      });
    try {
      const [lease] = await acquireArm(clusters, request({ payload: RELEASED, upgradeTarget: PR, count: 1 }));
      requestUpdate(PR);
      const moved = Date.now();
      while (upgrading.payload() !== PR) {
        expect(Date.now() - moved).toBeLessThan(10_000);
        await new Promise((r) => setTimeout(r, 50));
      }
      // Several health checks after the upgrade completed: the lease still holds.
      const checks = () => upgrading.api.stats.calls.get("GET clusterversions") ?? 0;
      const upgraded = checks();
      await expect.poll(checks, { timeout: 10_000 }).toBeGreaterThanOrEqual(upgraded + 3);
      expect(lease!.lost.aborted).toBe(false);
      const other = `quay.io/mallory/payload@sha256:${"c".repeat(64)}`;
      requestUpdate(other);
      await new Promise<void>((resolve) => lease!.lost.addEventListener("abort", () => resolve()));
      expect(String(lease!.lost.reason)).toContain(`now runs ${other}, not ${RELEASED} or ${PR}`);
      await lease!.release();
    } finally {
      clusters.stop();
      await upgrading.stop();
    }
  });

  it("fails at once, with the operator's reason, when the cluster-version operator refuses to move a cluster", async () => {
    const refusing = await startSimulatedCluster({
      arch: "amd64",
      payload: RELEASED,
      resolveRelease: (image) => {
        throw new Error(`unable to retrieve ${image}: manifest unknown`);
      },
    });
    const sources = clusterSourcesSchema.parse([
      {
        type: "static",
        name: "lab",
        clusters: [{ name: "refusing", arch: "amd64", kubeconfig: refusing.kubeconfigPath, upgrade: true }],
      },
    ]);
    const clusters = createClusterProvider({
      sources: () => sources,
      ...leasesFor("refused-upgrade-test"),
      logger,
      timing: { pollMs: 50, healthPollMs: 100, lostAfterFailures: 2 },
      timeoutMs: 30_000,
    });
    try {
      const started = Date.now();
      const error = await acquireArm(clusters, request({ payload: PR, count: 1 })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ClustersUnavailableError);
      expect((error as Error).message).toContain(
        `the cluster-version operator refused the upgrade to ${PR} (ReleaseAccepted=False)`,
      );
      expect((error as Error).message).toContain("manifest unknown");
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      clusters.stop();
      await refusing.stop();
    }
  });

  it("aborts a lease's lost signal when its cluster stops answering", async () => {
    const lostCluster = await startSimulatedCluster({ arch: "arm64", payload: RELEASED });
    const sources = clusterSourcesSchema.parse([
      {
        type: "static",
        name: "lab",
        clusters: [{ name: "one", arch: "arm64", kubeconfig: lostCluster.kubeconfigPath }],
      },
    ]);
    const clusters = createClusterProvider({
      sources: () => sources,
      ...leasesFor("lost-test"),
      logger,
      timing: { pollMs: 50, healthPollMs: 100, lostAfterFailures: 2 },
      timeoutMs: 1000,
    });
    try {
      const [lease] = await acquireArm(clusters, request({ arch: "arm64", count: 1 }));
      expect(lease!.lost.aborted).toBe(false);
      await lostCluster.stop();
      await new Promise<void>((resolve) => lease!.lost.addEventListener("abort", () => resolve()));
      expect(String(lease!.lost.reason)).toMatch(/lab\/one lost: .* did not answer 2 times in a row/);
      await lease!.release();
    } finally {
      clusters.stop();
    }
  });
});
