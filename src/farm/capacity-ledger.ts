import type { Redis } from "ioredis";

/**
 * Shards running per cluster, shared by every bot replica. Each running shard holds a lease: a
 * member of the cluster's sorted set scored with its expiry, which the holder renews. A replica
 * that dies stops renewing and its leases lapse, so capacity never leaks. Time is Redis's own
 * (TIME), so replicas with skewed clocks agree.
 */
export interface CapacityLedger {
  /** Live leases per cluster, and this run's share of them. */
  loads(
    clusters: readonly string[],
    runKey: string,
  ): Promise<{ load: Map<string, number>; runLoad: Map<string, number> }>;
  /**
   * Takes a lease if the cluster has room (or already holds this lease). Atomic: two replicas
   * racing for the last slot cannot both win.
   */
  acquire(lease: Lease & { capacity: number }): Promise<boolean>;
  /** Records a shard that is already running (adopted after a restart), room or not. */
  adopt(lease: Lease): Promise<void>;
  renew(leases: readonly Lease[]): Promise<void>;
  release(lease: Lease): Promise<void>;
}

export interface Lease {
  cluster: string;
  runKey: string;
  /** The Job name: unique per cluster namespace, stable across restarts. */
  id: string;
}

// KEYS: cluster set, run set. ARGV: member, run member, ttl ms, capacity (-1: no limit).
const ACQUIRE = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms)
local capacity = tonumber(ARGV[4])
if capacity >= 0 and not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= capacity then
  return 0
end
local expiry = ms + tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], expiry, ARGV[1])
redis.call('ZADD', KEYS[2], expiry, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3] * 2)
redis.call('PEXPIRE', KEYS[2], ARGV[3] * 2)
return 1
`;

// KEYS: cluster sets…; ARGV: run set key. Returns live counts per cluster and the run's members.
const LOADS = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local counts = {}
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ms)
  counts[i] = redis.call('ZCARD', key)
end
redis.call('ZREMRANGEBYSCORE', ARGV[1], '-inf', ms)
return { counts, redis.call('ZRANGE', ARGV[1], 0, -1) }
`;

// KEYS: pairs of (cluster set, run set). ARGV: ttl ms, then pairs of (member, run member).
// Renewal re-adds a missing lease: after Redis lost its data, running shards count again.
const RENEW = `
local now = redis.call('TIME')
local expiry = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[1])
for i = 1, #KEYS, 2 do
  redis.call('ZADD', KEYS[i], expiry, ARGV[i + 1])
  redis.call('ZADD', KEYS[i + 1], expiry, ARGV[i + 2])
  redis.call('PEXPIRE', KEYS[i], ARGV[1] * 2)
  redis.call('PEXPIRE', KEYS[i + 1], ARGV[1] * 2)
end
return 1
`;

export function createCapacityLedger(options: {
  redis: Redis;
  prefix: string;
  leaseMs: number;
}): CapacityLedger {
  const { redis, prefix, leaseMs } = options;
  const clusterKey = (cluster: string) => `${prefix}:farm:leases:${cluster}`;
  const runSetKey = (runKey: string) => `${prefix}:farm:run-leases:${runKey}`;
  const runMember = (lease: Lease) => `${lease.cluster}/${lease.id}`;
  const take = (lease: Lease, capacity: number) =>
    redis.eval(
      ACQUIRE,
      2,
      clusterKey(lease.cluster),
      runSetKey(lease.runKey),
      lease.id,
      runMember(lease),
      leaseMs,
      capacity,
    );

  return {
    async loads(clusters, runKey) {
      const [counts, members] = (await redis.eval(
        LOADS,
        clusters.length,
        ...clusters.map(clusterKey),
        runSetKey(runKey),
      )) as [number[], string[]];
      const load = new Map(clusters.map((c, i) => [c, counts[i] ?? 0]));
      const runLoad = new Map<string, number>();
      for (const member of members) {
        const cluster = member.slice(0, member.indexOf("/"));
        runLoad.set(cluster, (runLoad.get(cluster) ?? 0) + 1);
      }
      return { load, runLoad };
    },
    acquire: async (lease) => (await take(lease, lease.capacity)) === 1,
    adopt: async (lease) => void (await take(lease, -1)),
    async renew(leases) {
      if (leases.length === 0) return;
      const keys = leases.flatMap((l) => [clusterKey(l.cluster), runSetKey(l.runKey)]);
      const members = leases.flatMap((l) => [l.id, runMember(l)]);
      await redis.eval(RENEW, keys.length, ...keys, leaseMs, ...members);
    },
    async release(lease) {
      await redis
        .multi()
        .zrem(clusterKey(lease.cluster), lease.id)
        .zrem(runSetKey(lease.runKey), runMember(lease))
        .exec();
    },
  };
}
