import type { Redis } from "ioredis";
import { runKey } from "@netstress/core/kube/netstress-labels.ts";
import { redisKeys } from "../redis/redis-keys.ts";
import { redisScripts } from "../redis/redis-scripts.ts";

/** One lease: `holder` says who (run, arm, slot) and, for a cluster, the payload it needs. */
export interface ClusterLeaseKey {
  /** A cluster (`<source>/<name>`) or a source's quota (`<source>`). */
  pool: string;
  runId: string;
  /** What inside the run holds it, e.g. `pr/1`; no '|'. */
  holder: string;
  /** The payload every holder of the pool must want ('' : any). */
  payload: string;
}

/**
 * A static cluster that ran a pull request's code: the sha256 of the kubeconfig it had then (a
 * reinstalled cluster has another) and the run whose PR arm had it, which alone may take it again.
 */
export interface ClusterFence {
  kubeconfig: string;
  runId: string;
}

/** A run's whole need of one source's quota: every lease it takes there, all in `pool`. */
export interface QuotaReservation {
  pool: string;
  runId: string;
  leases: readonly ClusterLeaseKey[];
  capacity: number;
  /** Lower bands are served first (gates and periodics before PR runs); arrival order inside a band. */
  band: number;
  /** A waiting run that stops asking for this long loses its place. */
  ticketMs: number;
}

export interface ReservationAnswer {
  granted: boolean;
  /** Runs served before this one. */
  ahead: number;
  /** Leases held in the quota (with this run's, when granted). */
  held: number;
}

/**
 * Leases on clusters under test and on sources' quotas, in Redis, shared by every bot replica: a
 * sorted set per pool scored with expiries (Redis's own clock), renewed by the holder, lapsing when
 * it dies. A member names its run, so that start-up reconciliation can free those of ended runs,
 * and a restarted run taking the same lease again finds it held.
 */
export interface ClusterLeases {
  /** How long a lease lasts unless renewed. */
  readonly leaseMs: number;
  /** Takes (or keeps) the lease if the pool has room and its holders want the same payload. */
  take(lease: ClusterLeaseKey, capacity: number): Promise<boolean>;
  /**
   * Takes all of a run's leases in a quota at once, or none and queues the run (ask again to keep
   * its place): nobody holds part of a need while waiting, so waiting runs never block each other.
   */
  reserve(reservation: QuotaReservation): Promise<ReservationAnswer>;
  /** Leaves the quota's queue (the run stopped waiting). */
  withdraw(pool: string, runId: string): Promise<void>;
  /** Renews the leases still held; returns those that lapsed meanwhile, which it does not take again. */
  renew(leases: readonly ClusterLeaseKey[]): Promise<ClusterLeaseKey[]>;
  release(lease: ClusterLeaseKey): Promise<void>;
  /** The live leases of a pool. */
  holders(pool: string): Promise<ClusterLeaseKey[]>;
  /** The live leases a run holds, in every pool. */
  heldBy(runId: string): Promise<ClusterLeaseKey[]>;
  /** Marks a cluster as having run a pull request's code (replacing an older mark); kept until replaced. */
  fence(pool: string, fence: ClusterFence): Promise<void>;
  /** The cluster's mark, if a PR arm ever had it. */
  fenceOf(pool: string): Promise<ClusterFence | undefined>;
}

const SEPARATOR = "|";

export function createClusterLeases(options: {
  redis: Redis;
  prefix: string;
  leaseMs: number;
}): ClusterLeases {
  const { redis, leaseMs } = options;
  const keys = redisKeys(options.prefix);
  const scripts = redisScripts(redis);
  const member = (l: ClusterLeaseKey) => [l.runId, l.holder, l.payload].join(SEPARATOR);
  const runMember = (l: ClusterLeaseKey) => `${l.pool}${SEPARATOR}${member(l)}`;
  const parse = (pool: string, text: string): ClusterLeaseKey | undefined => {
    const parts = text.split(SEPARATOR);
    if (parts.length < 3) return undefined;
    const payload = parts.pop()!;
    const holder = parts.pop()!;
    return { pool, runId: parts.join(SEPARATOR), holder, payload };
  };
  const live = async (key: string) => {
    const [seconds] = await redis.time();
    return redis.zrangebyscore(key, Number(seconds) * 1000, "+inf");
  };

  return {
    leaseMs,
    async take(lease, capacity) {
      const granted = await scripts.clusterLeaseAcquire(
        keys.clusterLeases(lease.pool),
        keys.clusterRunLeases(runKey(lease.runId)),
        leaseMs,
        member(lease),
        runMember(lease),
        capacity,
        lease.payload,
      );
      return granted === 1;
    },
    async reserve(reservation) {
      const [granted, ahead, held] = (await scripts.clusterQuotaReserve(
        keys.clusterLeases(reservation.pool),
        keys.clusterQuotaQueue(reservation.pool),
        keys.clusterQuotaTickets(reservation.pool),
        keys.clusterRunLeases(runKey(reservation.runId)),
        leaseMs,
        reservation.ticketMs,
        reservation.runId,
        reservation.band,
        reservation.capacity,
        reservation.leases.length,
        ...reservation.leases.map(member),
        ...reservation.leases.map(runMember),
      )) as [number, number, number];
      return { granted: granted === 1, ahead, held };
    },
    async withdraw(pool, runId) {
      await redis
        .multi()
        .zrem(keys.clusterQuotaQueue(pool), runId)
        .zrem(keys.clusterQuotaTickets(pool), runId)
        .exec();
    },
    async renew(leases) {
      if (leases.length === 0) return [];
      const pairs = leases.flatMap((l) => [
        keys.clusterLeases(l.pool),
        keys.clusterRunLeases(runKey(l.runId)),
      ]);
      const members = leases.flatMap((l) => [member(l), runMember(l)]);
      const renewed = (await scripts.clusterLeaseRenew(
        pairs.length,
        ...pairs,
        leaseMs,
        ...members,
      )) as number[];
      return leases.filter((_, i) => renewed[i] !== 1);
    },
    async release(lease) {
      await redis
        .multi()
        .zrem(keys.clusterLeases(lease.pool), member(lease))
        .zrem(keys.clusterRunLeases(runKey(lease.runId)), runMember(lease))
        .exec();
    },
    async holders(pool) {
      return (await live(keys.clusterLeases(pool))).flatMap((m) => parse(pool, m) ?? []);
    },
    async heldBy(runId) {
      return (await live(keys.clusterRunLeases(runKey(runId)))).flatMap((m) => {
        const at = m.indexOf(SEPARATOR);
        return parse(m.slice(0, at), m.slice(at + 1)) ?? [];
      });
    },
    async fence(pool, fence) {
      await redis.hset(keys.clusterFence(pool), { kubeconfig: fence.kubeconfig, runId: fence.runId });
    },
    async fenceOf(pool) {
      const { kubeconfig, runId } = await redis.hgetall(keys.clusterFence(pool));
      return kubeconfig === undefined || runId === undefined ? undefined : { kubeconfig, runId };
    },
  };
}
