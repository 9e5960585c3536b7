// Items: trust boundaries of static clusters under test. Static clusters served PR arms (and moved
// to PR payloads) and went on to the next run as the PR's code left them, with cluster-admin; a
// shared one gave several runs cluster-admin at once; and a start-up reconciliation freed the lease
// a run took while the run store's snapshot was being read (the run was not in it yet), handing the
// cluster to a second run while the first used it.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterLeases } from "../../src/clusters/cluster-leases.ts";
import { createClusterProvider } from "../../src/clusters/create-cluster-provider.ts";
import { clusterSourcesSchema } from "../../src/clusters/cluster-sources-config.ts";
import { loadFarmConfig } from "../../src/farm/load-farm-config.ts";
import { deployProbes } from "@netstress/network-extension/deploy-probes.ts";
import { kubeProbeCluster } from "@netstress/network-extension/kube-probe-cluster.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import type { ClusterProvider, RunClusterRequest } from "../../src/runs/clusters-under-test.ts";
import {
  startSimulatedCluster,
  type SimulatedCluster,
} from "@netstress/testbed/sim/start-simulated-cluster.ts";
import { startRedis, type RedisServer } from "../helpers/start-redis.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const RELEASED = `quay.io/openshift-release-dev/ocp-release@sha256:${"a".repeat(64)}`;

let redisServer: RedisServer;
let redis: Redis;
let dir: Awaited<ReturnType<typeof tempDir>>;
let clusters: SimulatedCluster[];
/** Where the source reads each cluster's kubeconfig: an operator's reinstall writes the new one there. */
const kubeconfigPath = (i: number) => join(dir.path, `c${i}.kubeconfig`);

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  dir = await tempDir();
  clusters = await Promise.all(
    [0, 1].map(() => startSimulatedCluster({ arch: "amd64", payload: RELEASED, nodes: 1 })),
  );
  await Promise.all(clusters.map((c, i) => writeFile(kubeconfigPath(i), c.kubeconfig, { mode: 0o600 })));
});
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
  redis.disconnect();
  await redisServer.stop();
  await dir.remove();
});

/** A bot replica's provider of one static source over `clusters`, its leases in Redis under `prefix`. */
function replica(prefix: string, options: { source?: Record<string, unknown>; log?: string[] } = {}) {
  const sources = clusterSourcesSchema.parse([
    {
      type: "static",
      name: "lab",
      clusters: clusters.map((_, i) => ({ name: `c${i}`, arch: "amd64", kubeconfig: kubeconfigPath(i) })),
      ...options.source,
    },
  ]);
  const log = options.log;
  return createClusterProvider({
    sources: () => sources,
    leases: createClusterLeases({ redis, prefix, leaseMs: 30_000 }),
    prefix,
    logger: log
      ? pino({ level: "info" }, { write: (line: string) => void log.push(line) })
      : pino({ level: "silent" }),
    timing: { pollMs: 50, healthPollMs: 60_000, lostAfterFailures: 2 },
    timeoutMs: 5000,
  });
}

const newPrefix = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}`;

/** One arm's clusters for a run of `kind`, as the execute stage asks. */
async function clustersOf(
  provider: ClusterProvider,
  run: { runId: string; kind: NonNullable<RunClusterRequest["kind"]>; arm: Arm; count?: number },
) {
  const byArm = await provider.acquire({
    runId: run.runId,
    kind: run.kind,
    arch: "amd64",
    arms: [{ arm: run.arm, payload: RELEASED }],
    count: run.count ?? 1,
    signal: new AbortController().signal,
  });
  return byArm[run.arm] ?? [];
}
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("the clusters were handed out");
    },
    (error: unknown) => (error as Error).message,
  );

describe("static clusters and pull requests' code", () => {
  it("serve released payloads only, and refuse a PR arm saying what to configure", async () => {
    const provider = replica(newPrefix("released-only"));
    try {
      const served = [
        ...(await clustersOf(provider, { runId: "gate", kind: "gate", arm: "pr" })),
        ...(await clustersOf(provider, { runId: "periodic", kind: "periodic", arm: "pr" })),
      ];
      expect(served).toHaveLength(2);
      await Promise.all(served.map((l) => l.release()));
      const baseline = await clustersOf(provider, { runId: "pr-run", kind: "pr", arm: "baseline" });
      expect(baseline).toHaveLength(1);
      await baseline[0]!.release();
      const refused = await failureOf(clustersOf(provider, { runId: "pr-run", kind: "pr", arm: "pr" }));
      expect(refused).toContain("lab serves released payloads only");
      expect(refused).toContain("Set reinstall: true on the source");
    } finally {
      provider.stop();
    }
  });

  it("with reinstall: true, hand a cluster a PR arm had to nobody else until its kubeconfig changed", async () => {
    const log: string[] = [];
    const provider = replica(newPrefix("reinstall"), { source: { reinstall: true }, log });
    try {
      const [had] = await clustersOf(provider, { runId: "pr-run", kind: "pr", arm: "pr" });
      expect(had!.cluster.id).toBe("lab/c0");
      // Its Job gets the kubeconfig: the PR's test binaries have cluster-admin there.
      expect(await had!.cluster.kubeconfig()).toBe(clusters[0]!.kubeconfig);
      await had!.release();

      // Neither another run, nor the same run's baseline arm, gets it; the run is told why (and c1,
      // which the PR run pr-2 had while it failed to get a second cluster, was never used: it is free).
      for (const asking of [
        { runId: "gate", kind: "gate", arm: "baseline" },
        { runId: "pr-2", kind: "pr", arm: "pr" },
        { runId: "pr-run", kind: "pr", arm: "baseline" },
      ] as const) {
        const reason = await failureOf(clustersOf(provider, { ...asking, count: 2 }));
        expect(reason).toContain("1 of 2 amd64 clusters");
        expect(reason).toContain("c0 ran a pull request's code and waits to be reinstalled");
      }
      const fenced = log
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((l) => l.cluster === "lab/c0");
      expect(fenced[0]?.msg).toMatch(/ran a pull request's code: not handed out until it is reinstalled/);
      expect(fenced[0]?.ranPrCodeOf).toBe("pr-run");
      // The run whose PR arm had it takes it again (a resumed run).
      const [again] = await clustersOf(provider, { runId: "pr-run", kind: "pr", arm: "pr" });
      expect(again!.cluster.id).toBe("lab/c0");
      await again!.release();

      // The operator reinstalls it: a new cluster, a new admin kubeconfig where the source reads it.
      await clusters[0]!.stop();
      clusters[0] = await startSimulatedCluster({ arch: "amd64", payload: RELEASED, nodes: 1 });
      await writeFile(kubeconfigPath(0), clusters[0].kubeconfig, { mode: 0o600 });
      const both = await clustersOf(provider, { runId: "gate", kind: "gate", arm: "baseline", count: 2 });
      expect(both.map((l) => l.cluster.id).sort()).toEqual(["lab/c0", "lab/c1"]);
      await Promise.all(both.map((l) => l.release()));
    } finally {
      provider.stop();
    }
  });

  it("fence a cluster a PR arm moved to its payload, even before the arm's Jobs ran there", async () => {
    const PR = `registry.example/netstress/pr-payload@sha256:${"b".repeat(64)}`;
    const movable = await startSimulatedCluster({
      arch: "amd64",
      payload: RELEASED,
      nodes: 1,
      upgradeMs: 100,
    });
    const provider = createClusterProvider({
      sources: () =>
        clusterSourcesSchema.parse([
          {
            type: "static",
            name: "lab",
            reinstall: true,
            clusters: [{ name: "movable", arch: "amd64", kubeconfig: movable.kubeconfigPath, upgrade: true }],
          },
        ]),
      leases: createClusterLeases({ redis, prefix: newPrefix("moved"), leaseMs: 30_000 }),
      prefix: "moved",
      logger: pino({ level: "silent" }),
      timing: { pollMs: 50, healthPollMs: 60_000, lostAfterFailures: 2 },
      timeoutMs: 5000,
    });
    const ask = (runId: string, kind: NonNullable<RunClusterRequest["kind"]>, arm: Arm) =>
      provider.acquire({
        runId,
        kind,
        arch: "amd64",
        arms: [{ arm, payload: PR }],
        count: 1,
        signal: new AbortController().signal,
      });
    try {
      const moved = (await ask("pr-run", "pr", "pr")).pr!;
      expect(movable.payload()).toBe(PR);
      // The run ends before any Job of its got the kubeconfig: the PR's payload ran there all the same.
      await moved[0]!.release();
      const reason = await failureOf(ask("gate", "gate", "pr"));
      expect(reason).toContain("movable ran a pull request's code and waits to be reinstalled");
    } finally {
      provider.stop();
      await movable.stop();
    }
  });

  it("refuse, when the configuration is read, shared clusters on a source that serves PR arms", async () => {
    const sharedCluster = { name: "c0", arch: "amd64", kubeconfig: "c0.kubeconfig", shared: 3 };
    const config = (source: Record<string, unknown>) => ({
      runner: { image: `registry.test/netstress/runner@sha256:${"c".repeat(64)}` },
      clusters: [
        { name: "farm", kubeconfig: "in-cluster", namespace: "netstress", arches: ["amd64"], capacity: 2 },
      ],
      clusterSources: [{ type: "static", name: "lab", clusters: [sharedCluster], ...source }],
    });
    const path = join(dir.path, "farm.json");
    await writeFile(path, JSON.stringify(config({ reinstall: true })));
    const refused = await failureOf(loadFarmConfig(path));
    expect(refused).toContain("clusterSources.0.clusters.0.shared:");
    expect(refused).toContain(
      "c0 is shared by 3 runs at once, and this source serves PR arms (reinstall: true)",
    );
    expect(refused).toContain("cluster-admin");
    // Released payloads only: sharing stays possible, its risk documented.
    await writeFile(path, JSON.stringify(config({})));
    const loaded = await loadFarmConfig(path);
    expect(loaded.clusterSources[0]?.type === "static" && loaded.clusterSources[0].clusters[0]?.shared).toBe(
      3,
    );
  });
});

describe("what runs leave on a static cluster", () => {
  /** A runner SIGKILLed mid-test: its probe namespace is made (as the extension makes it), then it dies. */
  async function killedRunner(cluster: SimulatedCluster, namespace: string) {
    const real = kubeProbeCluster({ kubeconfig: cluster.kubeconfigPath, timeoutMs: 5000 });
    const killed = () => Promise.reject(new Error("SIGKILL"));
    await expect(
      deployProbes({
        cluster: { ...real, bindClusterRole: killed, createPod: killed, createService: killed },
        namespace,
        paths: new Set(["pod-to-pod-same-node/new", "pod-to-host/new"] as const),
        settings: {
          image: "quay.io/netstress/probe:test",
          intervalMs: 100,
          timeoutMs: 100,
          startTimeoutMs: 1000,
        },
        signal: new AbortController().signal,
        log: () => undefined,
      }),
    ).rejects.toThrow("SIGKILL");
  }
  const namespaces = (cluster: SimulatedCluster) =>
    cluster.api.store
      .list("namespaces", undefined, () => true)
      .items.filter((o) => !o.metadata.deletionTimestamp)
      .map((o) => o.metadata.name);

  it("are the bot's probe namespaces, deleted when the cluster is given back, and nothing else", async () => {
    const log: string[] = [];
    const provider = replica(newPrefix("leftovers"), { log });
    const cluster = clusters[0]!;
    // Someone else's namespaces on the cluster, one even labelled as managed by netstress.
    for (const [name, labels] of [
      ["team-monitoring", {}],
      ["netstress-other", { "app.kubernetes.io/managed-by": "netstress" }],
    ] as const) {
      cluster.api.store.create("namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, namespace: "", labels },
      });
    }
    try {
      const [lease] = await clustersOf(provider, { runId: "gate", kind: "gate", arm: "baseline" });
      expect(lease!.cluster.id).toBe("lab/c0");
      await killedRunner(cluster, "netstress-probes-killed");
      expect(namespaces(cluster)).toContain("netstress-probes-killed");
      await lease!.release();
      expect(namespaces(cluster)).not.toContain("netstress-probes-killed");
      expect(namespaces(cluster)).toEqual(expect.arrayContaining(["team-monitoring", "netstress-other"]));
      expect(log.join("\n")).toContain("deleted the probe namespaces runs left on the cluster under test");

      // A bot that died holding the cluster never gave it back: the next holder finds it clean.
      const [next] = await clustersOf(provider, { runId: "gate-2", kind: "gate", arm: "baseline" });
      await killedRunner(cluster, "netstress-probes-orphan");
      const crashed = replica(newPrefix("leftovers-crashed"));
      try {
        expect(
          (await clustersOf(crashed, { runId: "gate-3", kind: "gate", arm: "baseline" }))[0]!.cluster.id,
        ).toBe("lab/c0");
        expect(namespaces(cluster)).not.toContain("netstress-probes-orphan");
      } finally {
        crashed.stop();
      }
      await next!.release();
      expect(namespaces(cluster)).toEqual(expect.arrayContaining(["team-monitoring", "netstress-other"]));
    } finally {
      provider.stop();
    }
  });
});

describe("start-up reconciliation of static clusters", () => {
  it("keeps the lease a run took while the run store's snapshot was being read", async () => {
    const prefix = newPrefix("race");
    const crashed = replica(prefix);
    const [ended] = await clustersOf(crashed, { runId: "ended", kind: "gate", arm: "baseline" });
    crashed.stop(); // died holding it
    const starting = replica(prefix);
    const serving = replica(prefix); // another replica, serving webhooks meanwhile
    try {
      let took: Awaited<ReturnType<typeof clustersOf>> = [];
      const { released } = await starting.reconcile(async () => {
        // The store is read: run "new" does not exist yet. Then, before reconciliation goes on,
        // the run is accepted on the other replica and takes the free cluster.
        const snapshot = new Set<string>();
        took = await clustersOf(serving, { runId: "new", kind: "gate", arm: "baseline" });
        return snapshot;
      });
      expect(released).toBe(1);
      expect(took[0]!.cluster.id).not.toBe(ended!.cluster.id);
      const holders = await createClusterLeases({ redis, prefix, leaseMs: 30_000 }).holders(
        took[0]!.cluster.id,
      );
      expect(holders.map((l) => l.runId)).toEqual(["new"]);
      // And nobody else gets it while the run holds it.
      const third = await clustersOf(serving, { runId: "third", kind: "gate", arm: "baseline" });
      expect(third[0]!.cluster.id).toBe(ended!.cluster.id);
      await Promise.all([...took, ...third].map((l) => l.release()));
    } finally {
      starting.stop();
      serving.stop();
    }
  });
});
