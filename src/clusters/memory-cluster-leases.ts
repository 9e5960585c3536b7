import type { ClusterFence, ClusterLeaseKey, ClusterLeases } from "./cluster-leases.ts";

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
  /** Per pool, the runs waiting for it: in serving order, each with when its ticket lapses. */
  const queues = new Map<string, { runId: string; rank: [number, number]; expires: number }[]>();
  const fences = new Map<string, ClusterFence>();
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
    async reserve(reservation) {
      const at = now();
      const queue = (queues.get(reservation.pool) ?? []).filter((t) => t.expires > at);
      queues.set(reservation.pool, queue);
      let ticket = queue.find((t) => t.runId === reservation.runId);
      if (!ticket) {
        ticket = { runId: reservation.runId, rank: [reservation.band, at], expires: 0 };
        queue.push(ticket);
        queue.sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1]);
      }
      ticket.expires = at + reservation.ticketMs;
      const held = live(reservation.pool);
      const missing = reservation.leases.filter((l) => !held.some((h) => id(h) === id(l))).length;
      // A run that holds all of it already (resumed) keeps it without queueing.
      const ahead = missing === 0 ? 0 : queue.indexOf(ticket);
      if (ahead > 0) return { granted: false, ahead, held: held.length };
      if (reservation.capacity >= 0 && held.length + missing > reservation.capacity) {
        return { granted: false, ahead, held: held.length };
      }
      for (const lease of reservation.leases) hold(lease);
      queue.splice(queue.indexOf(ticket), 1);
      return { granted: true, ahead, held: held.length + missing };
    },
    async withdraw(pool, runId) {
      const queue = queues.get(pool);
      if (queue)
        queues.set(
          pool,
          queue.filter((t) => t.runId !== runId),
        );
    },
    async renew(leases) {
      const lapsed = leases.filter((l) => !live(l.pool).some((h) => id(h) === id(l)));
      for (const lease of leases) if (!lapsed.includes(lease)) hold(lease);
      return lapsed;
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
    async fence(pool, fence) {
      fences.set(pool, { ...fence });
    },
    async fenceOf(pool) {
      const fence = fences.get(pool);
      return fence && { ...fence };
    },
  };
}
