import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createCapacityLedger } from "../../src/farm/capacity-ledger.ts";
import { createClusterHealth } from "../../src/farm/cluster-health.ts";
import pino from "pino";

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject("redisUrl"));
});
afterAll(() => redis.quit());

describe("capacity ledger", () => {
  it("never lets replicas racing for the last slots exceed a cluster's capacity", async () => {
    const prefix = `test-${randomUUID()}`;
    // Five "replicas", each with its own connection, place 40 shards (in batches of 4) on a cluster of 7.
    const replicas = Array.from({ length: 5 }, () => new Redis(inject("redisUrl")));
    try {
      const ledgers = replicas.map((r) => createCapacityLedger({ redis: r, prefix, leaseMs: 60_000 }));
      const batches = await Promise.all(
        Array.from({ length: 10 }, (_, b) =>
          ledgers[b % 5]!.acquire(
            Array.from({ length: 4 }, (_, i) => [
              {
                cluster: "build01",
                runKey: `run${(b * 4 + i) % 3}`,
                id: `job-${b * 4 + i}`,
                capacity: 7,
              },
            ]),
          ),
        ),
      );
      expect(batches.flat().filter(Boolean)).toHaveLength(7);
      const { load, runLoads } = await ledgers[0]!.loads(["build01", "other"], ["run0", "run1", "run2"]);
      expect(load).toEqual(
        new Map([
          ["build01", 7],
          ["other", 0],
        ]),
      );
      expect([...runLoads.values()].reduce((sum, m) => sum + (m.get("build01") ?? 0), 0)).toBe(7);
    } finally {
      await Promise.all(replicas.map((r) => r.quit()));
    }
  });

  it("is idempotent for a lease it holds, frees on release, and counts adopted shards even over capacity", async () => {
    const ledger = createCapacityLedger({ redis, prefix: `test-${randomUUID()}`, leaseMs: 60_000 });
    const lease = { cluster: "c", runKey: "r", id: "job-a", capacity: 1 };
    expect(await ledger.acquire([[lease], [lease], [{ ...lease, id: "job-b" }]])).toEqual([
      true,
      true,
      false,
    ]);
    await ledger.adopt({ cluster: "c", runKey: "r", id: "job-running" });
    expect((await ledger.loads(["c"], [])).load.get("c")).toBe(2);
    await ledger.release(lease);
    await ledger.release({ cluster: "c", runKey: "r", id: "job-running" });
    expect(await ledger.acquire([[{ ...lease, id: "job-b" }]])).toEqual([true]);
    expect((await ledger.loads(["c"], ["r", "other"])).runLoads).toEqual(
      new Map([
        ["r", new Map([["c", 1]])],
        ["other", new Map()],
      ]),
    );
  });

  it("takes a group of leases whole or not at all, counting the group's own leases against each cluster", async () => {
    const ledger = createCapacityLedger({ redis, prefix: `test-${randomUUID()}`, leaseMs: 60_000 });
    const wish = (cluster: string, id: string) => ({ cluster, runKey: "r", id, capacity: 2 });
    expect(await ledger.acquire([[wish("a", "held")]])).toEqual([true]);
    // "a" has one slot left: a group wanting two there gets none, and holds none meanwhile.
    expect(await ledger.acquire([[wish("b", "1"), wish("a", "2"), wish("a", "3")]])).toEqual([false]);
    expect((await ledger.loads(["a", "b"], [])).load).toEqual(
      new Map([
        ["a", 1],
        ["b", 0],
      ]),
    );
    // A lease the group holds already needs no room; the next group sees what this one took.
    expect(await ledger.acquire([[wish("a", "held"), wish("a", "2")], [wish("a", "3")]])).toEqual([
      true,
      false,
    ]);
    expect((await ledger.loads(["a"], [])).load.get("a")).toBe(2);
  });

  it("frees the capacity of a replica that stopped renewing, and keeps what is renewed", async () => {
    const leaseMs = 1500;
    const ledger = createCapacityLedger({ redis, prefix: `test-${randomUUID()}`, leaseMs });
    const acquired = Date.now();
    await ledger.acquire([
      [{ cluster: "c", runKey: "r", id: "crashed", capacity: 2 }],
      [{ cluster: "c", runKey: "r", id: "alive", capacity: 2 }],
    ]);
    // Redis's clock times the leases, and it cannot be faked: a renewal every 100 ms stays far
    // inside the lease even when a loaded machine stalls the test, until the other is surely over.
    while (Date.now() < acquired + leaseMs + 500) {
      await new Promise((r) => setTimeout(r, 100));
      await ledger.renew([{ cluster: "c", runKey: "r", id: "alive" }]);
    }
    const { load, runLoads } = await ledger.loads(["c"], ["r"]);
    expect(load.get("c")).toBe(1);
    expect(runLoads.get("r")?.get("c")).toBe(1);
  });
});

describe("cluster health", () => {
  it("drains a cluster for every replica after consecutive failures, and a success resets the streak", async () => {
    const prefix = `test-${randomUUID()}`;
    const options = { redis, prefix, failuresToDrain: 3, drainMs: 400, logger: pino({ level: "silent" }) };
    const replicaA = createClusterHealth(options);
    const replicaB = createClusterHealth(options);
    await replicaA.failed("c", new Error("500"));
    await replicaA.failed("c", new Error("500"));
    replicaA.succeeded("c");
    await replicaA.failed("c", new Error("500"));
    expect(await replicaB.draining(["c"])).toEqual(new Set());
    await replicaA.failed("c", new Error("500"));
    await replicaA.failed("c", new Error("timeout"));
    expect(await replicaB.draining(["c", "d"])).toEqual(new Set(["c"]));
    await new Promise((r) => setTimeout(r, 500));
    expect(await replicaB.draining(["c"])).toEqual(new Set());
  });
});
