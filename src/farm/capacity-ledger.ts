import type { Redis } from "ioredis";

/**
 * Shards running per cluster, shared by every bot replica. Each running shard holds a lease: a
 * member of the cluster's sorted set scored with its expiry, which the holder renews. A replica
 * that dies stops renewing and its leases lapse, so capacity never leaks. Time is Redis's own
 * (TIME), so replicas with skewed clocks agree. Operations take many leases at once, so that
 * placing a thousand shards costs a few round trips, not thousands.
 */
export interface CapacityLedger {
  /** Live leases per cluster, and each run's share of them. */
  loads(
    clusters: readonly string[],
    runKeys: readonly string[],
  ): Promise<{ load: Map<string, number>; runLoads: Map<string, Map<string, number>> }>;
  /**
   * Takes each lease whose cluster has room (or that is held already), in order; says which.
   * Atomic: replicas racing for the last slot cannot both win.
   */
  acquire(leases: readonly (Lease & { capacity: number })[]): Promise<boolean[]>;
  /** Records shards that are already running (adopted after a restart), room or not. */
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

const NOW_MS = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
`;

// KEYS: pairs of (cluster set, run set). ARGV: ttl ms, then triples of (member, run member,
// capacity; -1: no limit). Returns 1 or 0 per lease.
const ACQUIRE = `${NOW_MS}
local ttl = tonumber(ARGV[1])
local granted = {}
for i = 1, #KEYS, 2 do
  local arg = (i - 1) / 2 * 3 + 2
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ms)
  local capacity = tonumber(ARGV[arg + 2])
  if capacity >= 0 and not redis.call('ZSCORE', KEYS[i], ARGV[arg]) and redis.call('ZCARD', KEYS[i]) >= capacity then
    granted[#granted + 1] = 0
  else
    redis.call('ZADD', KEYS[i], ms + ttl, ARGV[arg])
    redis.call('ZADD', KEYS[i + 1], ms + ttl, ARGV[arg + 1])
    redis.call('PEXPIRE', KEYS[i], ttl * 2)
    redis.call('PEXPIRE', KEYS[i + 1], ttl * 2)
    granted[#granted + 1] = 1
  end
end
return granted
`;

// KEYS: the cluster sets, then the run sets; ARGV: how many cluster sets. Returns live counts per
// cluster and each run's members.
const LOADS = `${NOW_MS}
local clusters = tonumber(ARGV[1])
local counts = {}
local runs = {}
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ms)
  if i <= clusters then counts[i] = redis.call('ZCARD', key) else runs[i - clusters] = redis.call('ZRANGE', key, 0, -1) end
end
return { counts, runs }
`;

// KEYS: pairs of (cluster set, run set). ARGV: ttl ms, then pairs of (member, run member).
// Renewal re-adds a missing lease: after Redis lost its data, running shards count again.
const RENEW = `${NOW_MS}
local expiry = ms + tonumber(ARGV[1])
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
  const take = async (leases: readonly (Lease & { capacity: number })[]): Promise<boolean[]> => {
    if (leases.length === 0) return [];
    const keys = leases.flatMap((l) => [clusterKey(l.cluster), runSetKey(l.runKey)]);
    const args = leases.flatMap((l) => [l.id, runMember(l), l.capacity]);
    const granted = (await redis.eval(ACQUIRE, keys.length, ...keys, leaseMs, ...args)) as number[];
    return granted.map((g) => g === 1);
  };

  return {
    async loads(clusters, runKeys) {
      const [counts, members] = (await redis.eval(
        LOADS,
        clusters.length + runKeys.length,
        ...clusters.map(clusterKey),
        ...runKeys.map(runSetKey),
        clusters.length,
      )) as [number[], string[][]];
      const load = new Map(clusters.map((c, i) => [c, counts[i] ?? 0]));
      const runLoads = new Map(
        runKeys.map((runKey, i) => {
          const perCluster = new Map<string, number>();
          for (const member of members[i] ?? []) {
            const cluster = member.slice(0, member.indexOf("/"));
            perCluster.set(cluster, (perCluster.get(cluster) ?? 0) + 1);
          }
          return [runKey, perCluster];
        }),
      );
      return { load, runLoads };
    },
    acquire: take,
    adopt: async (lease) => void (await take([{ ...lease, capacity: -1 }])),
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
