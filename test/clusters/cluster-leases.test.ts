import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClusterLeases,
  type ClusterLeaseKey,
  type ClusterLeases,
} from "../../src/clusters/cluster-leases.ts";
import { createMemoryClusterLeases } from "../../src/clusters/memory-cluster-leases.ts";
import { startRedis, type RedisServer } from "../helpers/start-redis.ts";

let redisServer: RedisServer;
let redis: Redis;
let prefixes = 0;

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
});
afterAll(async () => {
  redis.disconnect();
  await redisServer.stop();
});

const PAYLOAD_A = `quay.io/org/release@sha256:${"a".repeat(64)}`;
const PAYLOAD_B = `quay.io/org/pr-release@sha256:${"b".repeat(64)}`;
const lease = (overrides: Partial<ClusterLeaseKey> = {}): ClusterLeaseKey => ({
  pool: "lab/one",
  runId: "run-1",
  holder: "pr/0",
  payload: PAYLOAD_A,
  ...overrides,
});
const byHolder = (leases: ClusterLeaseKey[]) => leases.map((l) => `${l.pool} ${l.runId} ${l.holder}`).sort();
// Redis reads live leases against its clock in whole seconds: a lapsed lease may show for one more.
const lapse = (leases: ClusterLeases) => new Promise((r) => setTimeout(r, leases.leaseMs + 1500));

// One contract, every adapter: the bot's Redis leases and the one-process memory leases the demo uses.
describe.each([
  {
    adapter: "Redis",
    make: (leaseMs: number) => createClusterLeases({ redis, prefix: `leases-${prefixes++}`, leaseMs }),
  },
  { adapter: "memory", make: (leaseMs: number) => createMemoryClusterLeases({ leaseMs }) },
])("cluster leases in $adapter", ({ make }) => {
  it("grants a pool up to its capacity, and a holder taking its lease again keeps it", async () => {
    const leases = make(30_000);
    expect(await leases.take(lease({ holder: "pr/0" }), 2)).toBe(true);
    expect(await leases.take(lease({ holder: "pr/1" }), 2)).toBe(true);
    expect(await leases.take(lease({ runId: "run-2" }), 2)).toBe(false);
    expect(await leases.take(lease({ holder: "pr/1" }), 2)).toBe(true);
    expect(byHolder(await leases.holders("lab/one"))).toEqual(["lab/one run-1 pr/0", "lab/one run-1 pr/1"]);
    // -1: no limit.
    for (let i = 0; i < 5; i++)
      expect(await leases.take(lease({ pool: "quota", holder: `pr/${i}` }), -1)).toBe(true);
  });

  it("lets only holders of one payload share a pool; '' wants any", async () => {
    const leases = make(30_000);
    expect(await leases.take(lease({ payload: PAYLOAD_A }), 3)).toBe(true);
    expect(await leases.take(lease({ runId: "run-2", payload: PAYLOAD_B }), 3)).toBe(false);
    expect(await leases.take(lease({ runId: "run-3", payload: PAYLOAD_A }), 3)).toBe(true);
    expect(await leases.take(lease({ pool: "quota", payload: "" }), 3)).toBe(true);
    expect(await leases.take(lease({ pool: "quota", runId: "run-2", payload: "" }), 3)).toBe(true);
  });

  it("frees a released lease, and tells the leases of a run in every pool", async () => {
    const leases = make(30_000);
    await leases.take(lease({ pool: "lab/one" }), 1);
    await leases.take(lease({ pool: "lab/two", holder: "baseline/0" }), 1);
    await leases.take(lease({ pool: "lab/three", runId: "run-2" }), 1);
    expect(byHolder(await leases.heldBy("run-1"))).toEqual([
      "lab/one run-1 pr/0",
      "lab/two run-1 baseline/0",
    ]);
    await leases.release(lease({ pool: "lab/one" }));
    await leases.release(lease({ pool: "lab/one" })); // nothing to free twice
    expect(await leases.holders("lab/one")).toEqual([]);
    expect(await leases.take(lease({ pool: "lab/one", runId: "run-2" }), 1)).toBe(true);
    expect(byHolder(await leases.heldBy("run-1"))).toEqual(["lab/two run-1 baseline/0"]);
  });

  it("lets a lease nobody renews lapse, and keeps a renewed one", async () => {
    const leases = make(300);
    await leases.take(lease({ holder: "pr/0" }), 2);
    await leases.take(lease({ holder: "pr/1" }), 2);
    const renewing = setInterval(() => void leases.renew([lease({ holder: "pr/1" })]), 80);
    try {
      await lapse(leases);
      expect(byHolder(await leases.holders("lab/one"))).toEqual(["lab/one run-1 pr/1"]);
      expect(byHolder(await leases.heldBy("run-1"))).toEqual(["lab/one run-1 pr/1"]);
      expect(await leases.take(lease({ runId: "run-2" }), 2)).toBe(true);
    } finally {
      clearInterval(renewing);
    }
  });

  it("reserves a run's whole need at once or queues it, serving the head of the queue (gates before PR runs) first", async () => {
    const leases = make(30_000);
    const need = (runId: string, n: number) =>
      Array.from({ length: n }, (_, i) => lease({ pool: "quota", runId, holder: `pr/${i}`, payload: "" }));
    const ask = (runId: string, n: number, band = 1) =>
      leases.reserve({ pool: "quota", runId, leases: need(runId, n), capacity: 4, band, ticketMs: 30_000 });
    expect(await ask("first", 3)).toEqual({ granted: true, ahead: 0, held: 3 });
    // Does not fit: queued, holding nothing.
    expect(await ask("pr-run", 3)).toEqual({ granted: false, ahead: 0, held: 3 });
    expect(await leases.heldBy("pr-run")).toEqual([]);
    // A small PR request behind it does not overtake it; a gate goes before both.
    expect(await ask("small", 1)).toEqual({ granted: false, ahead: 1, held: 3 });
    expect(await ask("gate", 3, 0)).toEqual({ granted: false, ahead: 0, held: 3 });
    expect(await ask("pr-run", 3)).toEqual({ granted: false, ahead: 1, held: 3 });
    for (const l of need("first", 3)) await leases.release(l);
    expect((await ask("pr-run", 3)).granted).toBe(false);
    expect(await ask("gate", 3, 0)).toEqual({ granted: true, ahead: 0, held: 3 });
    // A run holding all it asks for (resumed after a restart) keeps it without queueing.
    expect(await ask("gate", 3, 0)).toEqual({ granted: true, ahead: 0, held: 3 });
    // A waiter that leaves gives its place up.
    await leases.withdraw("quota", "pr-run");
    expect(await ask("small", 1)).toEqual({ granted: true, ahead: 0, held: 4 });
  });

  it("never renews a lapsed lease back: a shared: 1 cluster taken meanwhile stays with its new holder", async () => {
    const leases = make(300);
    const stalled = lease({ pool: "lab/single", runId: "stalled" });
    expect(await leases.take(stalled, 1)).toBe(true);
    await lapse(leases);
    const next = lease({ pool: "lab/single", runId: "next" });
    expect(await leases.take(next, 1)).toBe(true);
    // The stalled holder wakes up and renews: it learns its lease is gone instead of booking twice.
    const lapsed = await leases.renew([stalled, next]);
    expect(byHolder(await leases.holders("lab/single"))).toEqual(["lab/single next pr/0"]);
    expect(lapsed).toEqual([stalled]);
    expect(await leases.heldBy("stalled")).toEqual([]);
  });

  it("keeps a cluster's PR mark, lease or none, until a newer one replaces it", async () => {
    const leases = make(30_000);
    expect(await leases.fenceOf("lab/one")).toBeUndefined();
    await leases.fence("lab/one", { kubeconfig: "1".repeat(64), runId: "pr-run" });
    expect(await leases.fenceOf("lab/one")).toEqual({ kubeconfig: "1".repeat(64), runId: "pr-run" });
    expect(await leases.fenceOf("lab/two")).toBeUndefined();
    await leases.fence("lab/one", { kubeconfig: "2".repeat(64), runId: "pr-2" });
    expect(await leases.fenceOf("lab/one")).toEqual({ kubeconfig: "2".repeat(64), runId: "pr-2" });
  });
});
