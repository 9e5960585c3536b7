import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";
import type { Logger } from "pino";

/**
 * A circuit breaker per cluster: after `failuresToDrain` API failures in a row (counted by this
 * replica), the cluster is drained for `drainMs` for every replica (the mark lives in Redis) —
 * it gets no new shards, while shards already there are still watched and collected.
 */
export interface ClusterHealth {
  draining(clusters: readonly string[]): Promise<Set<string>>;
  succeeded(cluster: string): void;
  failed(cluster: string, error: unknown): Promise<void>;
}

export function createClusterHealth(options: {
  redis: Redis;
  prefix: string;
  failuresToDrain: number;
  drainMs: number;
  logger: Logger;
}): ClusterHealth {
  const { redis, prefix, logger } = options;
  const key = redisKeys(prefix).farmDrain;
  const streaks = new Map<string, number>();
  return {
    async draining(clusters) {
      if (clusters.length === 0) return new Set();
      const marks = await redis.mget(...clusters.map(key));
      return new Set(clusters.filter((_, i) => marks[i] !== null));
    },
    succeeded(cluster) {
      streaks.delete(cluster);
    },
    async failed(cluster, error) {
      const streak = (streaks.get(cluster) ?? 0) + 1;
      streaks.set(cluster, streak);
      if (streak < options.failuresToDrain) return;
      streaks.delete(cluster);
      const reason = error instanceof Error ? error.message.split("\n")[0]! : String(error);
      await redis.set(key(cluster), reason, "PX", options.drainMs);
      logger.warn(
        { cluster, failures: streak, drainMs: options.drainMs, reason },
        "cluster drained after API failures",
      );
    },
  };
}
