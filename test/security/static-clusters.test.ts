// Item: trust boundaries of static clusters under test. A start-up reconciliation freed the lease a
// run took while the run store's snapshot was being read (the run was not in it yet), handing the
// cluster to a second run while the first used it.
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterLeases } from "../../src/clusters/cluster-leases.ts";
import { createClusterProvider } from "../../src/clusters/create-cluster-provider.ts";
import { clusterSourcesSchema } from "../../src/farm/farm-config.ts";
import { startSimulatedCluster, type SimulatedCluster } from "../../src/sim/start-simulated-cluster.ts";
import { startRedis, type RedisServer } from "../helpers/start-redis.ts";
import { acquireArm, request } from "../clusters/hive-fixture.ts";

const RELEASED = `quay.io/openshift-release-dev/ocp-release@sha256:${"a".repeat(64)}`;

let redisServer: RedisServer;
let redis: Redis;
let clusters: SimulatedCluster[];

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  clusters = await Promise.all(
    [0, 1].map(() => startSimulatedCluster({ arch: "amd64", payload: RELEASED, nodes: 1 })),
  );
});
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
  redis.disconnect();
  await redisServer.stop();
});

/** A bot replica's provider of one static source over `clusters`, its leases in Redis under `prefix`. */
function replica(prefix: string, source: Record<string, unknown> = {}) {
  const sources = clusterSourcesSchema.parse([
    {
      type: "static",
      name: "lab",
      clusters: clusters.map((c, i) => ({ name: `c${i}`, arch: "amd64", kubeconfig: c.kubeconfigPath })),
      ...source,
    },
  ]);
  return createClusterProvider({
    sources: () => sources,
    leases: createClusterLeases({ redis, prefix, leaseMs: 30_000 }),
    prefix,
    logger: pino({ level: "silent" }),
    timing: { pollMs: 50, healthPollMs: 60_000, lostAfterFailures: 2 },
    timeoutMs: 5000,
  });
}

const baseline = (runId: string) =>
  request({ runId, arm: "baseline", arch: "amd64", payload: RELEASED, count: 1 });

describe("start-up reconciliation of static clusters", () => {
  it("keeps the lease a run took while the run store's snapshot was being read", async () => {
    const prefix = `race-${Math.random().toString(36).slice(2, 8)}`;
    const crashed = replica(prefix);
    const [ended] = await acquireArm(crashed, baseline("ended"));
    crashed.stop(); // died holding it
    const starting = replica(prefix);
    const serving = replica(prefix); // another replica, serving webhooks meanwhile
    try {
      let took: Awaited<ReturnType<typeof acquireArm>> = [];
      const { released } = await starting.reconcile(async () => {
        // The store is read: run "new" does not exist yet. Then, before reconciliation goes on,
        // the run is accepted on the other replica and takes the free cluster.
        const snapshot = new Set<string>();
        took = await acquireArm(serving, baseline("new"));
        return snapshot;
      });
      expect(released).toBe(1);
      expect(took[0]!.cluster.id).not.toBe(ended!.cluster.id);
      const holders = await createClusterLeases({ redis, prefix, leaseMs: 30_000 }).holders(
        took[0]!.cluster.id,
      );
      expect(holders.map((l) => l.runId)).toEqual(["new"]);
      // And nobody else gets it while the run holds it.
      const third = await acquireArm(serving, baseline("third"));
      expect(third[0]!.cluster.id).toBe(ended!.cluster.id);
      await Promise.all([...took, ...third].map((l) => l.release()));
    } finally {
      starting.stop();
      serving.stop();
    }
  });
});
