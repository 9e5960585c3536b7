import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";
import { redisScripts } from "../redis/redis-scripts.ts";

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
   * Takes each group of leases whole if every cluster in it has room (a lease already held needs
   * none), else none of the group; in order, and says which groups it took. Atomic: replicas
   * racing for the last slot cannot both win, and no group holds part of its capacity meanwhile.
   */
  acquire(groups: readonly (readonly CapacityWish[])[]): Promise<boolean[]>;
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

/** A lease asked for on a cluster that runs at most `capacity` shards (-1: no limit). */
export type CapacityWish = Lease & { capacity: number };

export function createCapacityLedger(options: {
  redis: Redis;
  prefix: string;
  leaseMs: number;
}): CapacityLedger {
  const { redis, prefix, leaseMs } = options;
  const { farmLeases: clusterKey, farmRunLeases: runSetKey } = redisKeys(prefix);
  const scripts = redisScripts(redis);
  const runMember = (lease: Lease) => `${lease.cluster}/${lease.id}`;
  const take = async (groups: readonly (readonly CapacityWish[])[]): Promise<boolean[]> => {
    if (groups.length === 0) return [];
    const keys = groups.flat().flatMap((l) => [clusterKey(l.cluster), runSetKey(l.runKey)]);
    const args = groups.flatMap((group) => [
      group.length,
      ...group.flatMap((l) => [l.id, runMember(l), l.capacity]),
    ]);
    const granted = (await scripts.leaseAcquire(keys.length, ...keys, leaseMs, ...args)) as number[];
    return granted.map((g) => g === 1);
  };

  return {
    async loads(clusters, runKeys) {
      const [counts, members] = (await scripts.leaseLoads(
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
    adopt: async (lease) => void (await take([[{ ...lease, capacity: -1 }]])),
    async renew(leases) {
      if (leases.length === 0) return;
      const keys = leases.flatMap((l) => [clusterKey(l.cluster), runSetKey(l.runKey)]);
      const members = leases.flatMap((l) => [l.id, runMember(l)]);
      await scripts.leaseRenew(keys.length, ...keys, leaseMs, ...members);
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
