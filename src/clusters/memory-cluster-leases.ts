import type { ClusterLeaseKey, ClusterLeases } from "./cluster-leases.ts";

/**
 * The leases of ClusterLeases in this process's memory, for a bot of one process (`netstress
 * demo`): the same rules as the Redis leases — capacity, one payload per pool, expiry unless
 * renewed, taking a held lease again keeps it — but visible to this process only.
 */
export function createMemoryClusterLeases(options: { leaseMs: number; now?: () => number }): ClusterLeases {
  const now = options.now ?? Date.now;
  /** Per pool, its leases by holder identity, each with its expiry. */
  const pools = new Map<string, Map<string, { lease: ClusterLeaseKey; expires: number }>>();
  const id = (l: ClusterLeaseKey) => JSON.stringify([l.runId, l.holder, l.payload]);
  const live = (pool: string) => {
    const leases = pools.get(pool);
    if (!leases) return [];
    const at = now();
    for (const [key, entry] of leases) if (entry.expires <= at) leases.delete(key);
    if (leases.size === 0) pools.delete(pool);
    return [...leases.values()].map((e) => e.lease);
  };
  const hold = (lease: ClusterLeaseKey) => {
    const leases = pools.get(lease.pool) ?? new Map();
    pools.set(lease.pool, leases);
    leases.set(id(lease), { lease: { ...lease }, expires: now() + options.leaseMs });
  };

  return {
    leaseMs: options.leaseMs,
    async take(lease, capacity) {
      const held = live(lease.pool);
      if (!held.some((l) => id(l) === id(lease))) {
        if (capacity >= 0 && held.length >= capacity) return false;
        if (lease.payload !== "" && held.some((l) => l.payload !== lease.payload)) return false;
      }
      hold(lease);
      return true;
    },
    async renew(leases) {
      for (const lease of leases) hold(lease);
    },
    async release(lease) {
      pools.get(lease.pool)?.delete(id(lease));
    },
    async holders(pool) {
      return live(pool);
    },
    async heldBy(runId) {
      return [...pools.keys()].flatMap((pool) => live(pool).filter((l) => l.runId === runId));
    },
  };
}
