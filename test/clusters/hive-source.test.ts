import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClustersUnavailableError } from "../../src/runs/clusters-unavailable-error.ts";
import type { ProvisionProgress } from "../../src/runs/clusters-under-test.ts";
import { startFakeHive, type FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import {
  acquireArm,
  botObjects,
  hiveProvider,
  NAMESPACE,
  PR,
  RELEASED,
  request,
  seedHub,
} from "./hive-fixture.ts";
import { useRedis } from "./use-redis.ts";

const redisServer = useRedis();
let hive: FakeHive;
let prefix: string;

beforeEach(async () => {
  hive = await startFakeHive({ installMs: 200 });
  seedHub(hive);
  prefix = `t${Math.random().toString(36).slice(2, 8)}`;
});
afterEach(() => hive.stop());

const provider = (options: Partial<Parameters<typeof hiveProvider>[0]> = {}) =>
  hiveProvider({ hubKubeconfig: hive.hub.kubeconfigPath, redis: redisServer.client, prefix, ...options });

describe("Hive cluster source", () => {
  it("claims pooled clusters for a payload a pool serves, with a lifetime, and deletes the claims on release", async () => {
    const clusters = provider();
    try {
      const leases = await acquireArm(
        clusters,
        request({ arm: "baseline", arch: "amd64", payload: RELEASED }),
      );
      expect(leases).toHaveLength(2);
      const claims = hive.hub.store.list("clusterclaims", NAMESPACE, () => true).items;
      expect(claims.map((c) => [c.spec?.clusterPoolName, c.spec?.lifetime])).toEqual([
        ["released-amd64", "8h"],
        ["released-amd64", "8h"],
      ]);
      expect(claims[0]!.metadata.annotations?.["netstress.io/run-id"]).toBe("run-1");
      for (const lease of leases) {
        expect(lease.cluster.payload).toBe(RELEASED);
        expect(await lease.cluster.kubeconfig()).toContain("certificate-authority-data");
      }
      await Promise.all(leases.map((l) => l.release()));
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("lets a crossover move its claimed cluster to the PR payload, and hands the run that cluster again by its number after a restart, though it runs the PR payload now", async () => {
    const ask = {
      runId: "run-crossover",
      arch: "amd64" as const,
      arms: [{ arm: "pr" as const, payload: RELEASED, upgradeTarget: PR, moves: true }],
      count: 1,
      firstSlot: 2,
      signal: new AbortController().signal,
    };
    const before = provider();
    const after = provider();
    try {
      const [lease] = (await before.acquire(ask)).pr!;
      expect(lease!.cluster.id).toMatch(/-pr-amd64-c2-a0$/);
      expect(before.movesClusters?.()).toBe(true);
      expect(provider({ maxClusters: 3 }).movableAtOnce?.()).toBe(3);
      await lease!.upgrade!(PR, ask.signal);
      const name = lease!.cluster.id.slice("hive/".length);
      const claim = hive.hub.store.get("clusterclaims", NAMESPACE, name)!;
      const running = hive.clusters().find((c) => c.name === claim.spec?.namespace);
      expect(running?.payload()).toBe(PR);
      // The worker stops without giving it back; the one that resumes the run asks for number 2 again.
      const [adopted] = (await after.acquire(ask)).pr!;
      expect(adopted!.cluster).toMatchObject({ id: lease!.cluster.id, payload: PR });
      expect(lease!.lost.aborted).toBe(false);
      await adopted!.release();
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
    } finally {
      before.stop();
      after.stop();
    }
  });

  it("installs a PR payload with a ClusterDeployment and its image set, with delete-after, and deletes them on release", async () => {
    const clusters = provider();
    try {
      const phases: ProvisionProgress[] = [];
      const leases = await acquireArm(clusters, request({ onProgress: (p) => phases.push(p) }));
      expect(leases.map((l) => l.cluster.id)).toEqual([
        expect.stringMatching(/^hive\/nst-[0-9a-f]{12}-pr-arm64-c0-a0$/),
        expect.stringMatching(/^hive\/nst-[0-9a-f]{12}-pr-arm64-c1-a0$/),
      ]);
      const name = leases[0]!.cluster.id.slice("hive/".length);
      const deployment = hive.hub.store.get("clusterdeployments", NAMESPACE, name)!;
      expect(deployment.metadata.annotations?.["hive.openshift.io/delete-after"]).toBe("8h");
      expect(deployment.spec?.provisioning).toEqual({
        installConfigSecretRef: { name: `${name}-install-config` },
        imageSetRef: { name },
      });
      expect(hive.hub.store.get("clusterimagesets", "", name)?.spec?.releaseImage).toBe(PR);
      const installed = hive.clusterOf({ namespace: NAMESPACE, name })!;
      expect([installed.arch, installed.payload()]).toEqual(["arm64", PR]);
      expect(phases[0]).toMatchObject({ phase: "installing", wanted: 2, ready: 0 });
      expect(phases.at(-1)).toMatchObject({ phase: "ready", wanted: 2, ready: 2 });
      await Promise.all(leases.map((l) => l.release()));
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
      expect(hive.clusters()).toHaveLength(2); // the pool's own, unclaimed
    } finally {
      clusters.stop();
    }
  });

  it("replaces a failed install with another attempt, and says why when every attempt fails", async () => {
    hive.setFaults({ failInstall: (d) => d.name.endsWith("-c0-a0") });
    const clusters = provider();
    try {
      const leases = await acquireArm(clusters, request({ count: 1 }));
      expect(leases[0]!.cluster.id).toMatch(/-c0-a1$/);
      await leases[0]!.release();
      hive.setFaults({ failInstall: 1 });
      const error = await acquireArm(clusters, request({ runId: "run-2", count: 1 })).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ClustersUnavailableError);
      expect((error as Error).message).toMatch(
        /no arm64 cluster of .* after 2 attempts: deployment .*-a0 failed to install/,
      );
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("gives up a cluster that never becomes ready at the readiness deadline", async () => {
    hive.setFaults({ neverReady: 1 });
    const clusters = provider({ readySeconds: 1, attempts: 1 });
    try {
      const started = Date.now();
      const error = await acquireArm(clusters, request({ count: 1 })).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/deployment nst-.*-a0 was not ready in 1 s/);
      expect(Date.now() - started).toBeLessThan(15_000);
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("retries a give-back the hub failed, so a release that failed once still frees the cluster", async () => {
    const clusters = provider();
    try {
      const [lease] = await acquireArm(clusters, request({ count: 1 }));
      hive.hub.setFaults({ errorRate: 1 });
      await expect(lease!.release()).rejects.toThrow(/injected fault/);
      hive.hub.setFaults({ errorRate: 0 });
      await lease!.release();
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("tells a lease its cluster was lost mid-run", async () => {
    const clusters = provider();
    try {
      const [lease] = await acquireArm(clusters, request({ count: 1 }));
      await hive.loseCluster({ namespace: NAMESPACE, name: lease!.cluster.id.slice("hive/".length) });
      await new Promise<void>((resolve) => lease!.lost.addEventListener("abort", () => resolve()));
      expect(String(lease!.lost.reason)).toMatch(/lost: .* did not answer/);
      await lease!.release();
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("queues requests beyond the quota, telling how full it is, and serves them when clusters come back", async () => {
    const clusters = provider({ maxClusters: 2 });
    try {
      const first = await acquireArm(clusters, request({ count: 2 }));
      const progress: ProvisionProgress[] = [];
      const second = acquireArm(
        clusters,
        request({ runId: "run-2", count: 2, onProgress: (p) => progress.push(p) }),
      );
      await expect.poll(() => progress.at(-1)?.phase, { timeout: 10_000 }).toBe("queued");
      expect(progress.at(-1)?.detail).toBe("hive quota 2/2");
      expect(
        hive.hub.store
          .list("clusterdeployments", NAMESPACE, () => true)
          .items.filter((d) => d.metadata.labels?.["netstress.io/arm"]),
      ).toHaveLength(2);
      await first[0]!.release();
      await first[1]!.release();
      const served = await second;
      expect(served).toHaveLength(2);
      await Promise.all(served.map((l) => l.release()));
    } finally {
      clusters.stop();
    }
  });

  it("gives every cluster back when the request is aborted while they install", async () => {
    const clusters = provider();
    try {
      const abort = new AbortController();
      const pending = acquireArm(
        clusters,
        request({
          count: 3,
          signal: abort.signal,
          onProgress: (p) => p.phase === "installing" && abort.abort(new Error("run aborted")),
        }),
      );
      await expect(pending).rejects.toThrow(/aborted/);
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
      await expect
        .poll(() => redisServer.client.keys(`${prefix}:clusters:leases:*`), { timeout: 10_000 })
        .toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("reconciles: gives back the claims and deployments of runs that ended, keeps the active run's", async () => {
    const crashed = provider();
    await acquireArm(crashed, request({ runId: "ended", count: 1 }));
    await acquireArm(
      crashed,
      request({ runId: "ended", arm: "baseline", arch: "amd64", payload: RELEASED, count: 1 }),
    );
    const kept = await acquireArm(crashed, request({ runId: "active", count: 1 }));
    crashed.stop();
    const restarted = provider();
    try {
      expect(await restarted.reconcile(async () => new Set(["active"]))).toEqual({ released: 2 });
      const left = botObjects(hive);
      expect(left.every((o) => o.includes(kept[0]!.cluster.id.slice("hive/".length)))).toBe(true);
      expect(left).toHaveLength(3); // deployment, image set, install-config
      await kept[0]!.release();
    } finally {
      restarted.stop();
    }
  });

  it("reconciles without giving back what a run acquired while the active runs were being read", async () => {
    const starting = provider();
    const restarted = provider();
    let late: Awaited<ReturnType<typeof acquireArm>> = [];
    try {
      // The run store answered before the run was accepted; the run then took its cluster while
      // the answer was on its way back.
      const released = await restarted.reconcile(async () => {
        const snapshot = new Set<string>();
        late = await acquireArm(starting, request({ runId: "late", count: 1 }));
        return snapshot;
      });
      expect(released).toEqual({ released: 0 });
      const id = late[0]!.cluster.id.slice("hive/".length);
      expect(botObjects(hive).some((o) => o.includes(id))).toBe(true);
      await late[0]!.release();
    } finally {
      starting.stop();
      restarted.stop();
    }
  });

  it("a worker SIGKILLed while clusters install leaks none, and the run that resumes creates none twice", async () => {
    await hive.stop();
    hive = await startFakeHive({ installMs: 2500 });
    seedHub(hive);
    const creations = new Map<string, number>();
    hive.hub.store.subscribe((event) => {
      if (event.resource === "clusterdeployments" && event.type === "ADDED")
        creations.set(event.object.metadata.name, (creations.get(event.object.metadata.name) ?? 0) + 1);
    });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(new URL("./provision-process.ts", import.meta.url))],
      {
        env: {
          ...process.env,
          REDIS_URL: redisServer.url,
          HUB_KUBECONFIG: hive.hub.kubeconfigPath,
          PREFIX: prefix,
        },
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    const ours = () => [...creations.keys()].filter((name) => name.startsWith("nst-"));
    await expect.poll(ours, { timeout: 30_000, interval: 50 }).toHaveLength(5);
    // Killed mid-install: none of ours is installed yet (the pool's may or may not be by now).
    for (const name of ours()) {
      expect(hive.hub.store.get("clusterdeployments", NAMESPACE, name)?.spec?.installed).not.toBe(true);
    }
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;

    const restarted = provider();
    try {
      // Start-up: the ended run's clusters go back; the active run resumes and adopts its own.
      expect(await restarted.reconcile(async () => new Set(["active"]))).toEqual({ released: 2 });
      const leases = await acquireArm(restarted, request({ runId: "active", count: 3 }));
      expect(leases.map((l) => l.cluster.id.slice("hive/".length)).sort()).toEqual(
        ours()
          .filter((name) => hive.hub.store.get("clusterdeployments", NAMESPACE, name))
          .sort(),
      );
      expect([...creations.values()].every((count) => count === 1)).toBe(true);
      await Promise.all(leases.map((l) => l.release()));
      await expect.poll(() => botObjects(hive), { timeout: 10_000 }).toEqual([]);
      await expect
        .poll(() => redisServer.client.keys(`${prefix}:clusters:leases:*`), { timeout: 10_000 })
        .toEqual([]);
    } finally {
      restarted.stop();
    }
  });
});
