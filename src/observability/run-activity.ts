import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";

/** The little a run's activity needs: what Redis keeps for the runs-by-state gauge and the index page. */
export interface RunActivityEntry {
  id: string;
  state: string;
  createdAt: string;
}

export interface RunActivity {
  /** Notes a run's current state: active runs are counted by state, every run is listed as recent. */
  record(run: RunActivityEntry): Promise<void>;
  /** Active (not completed) runs per state, across every replica. */
  activeByState(): Promise<Map<string, number>>;
  /** Ids of the newest runs, newest first. */
  recent(limit: number): Promise<string[]>;
}

/**
 * Run activity in Redis, shared by every replica: a hash of active run id → state (a completed run
 * leaves it) and a sorted set of the newest run ids, capped at `keepRecent`. Both stay small
 * whatever the run history.
 */
export function createRunActivity(options: {
  redis: Redis;
  prefix: string;
  keepRecent?: number;
}): RunActivity {
  const { redis, prefix, keepRecent = 200 } = options;
  const { activeRunStates: activeKey, recentRuns: recentKey } = redisKeys(prefix);
  return {
    async record(run) {
      const multi = redis.multi();
      if (run.state === "completed") multi.hdel(activeKey, run.id);
      else multi.hset(activeKey, run.id, run.state);
      multi.zadd(recentKey, Date.parse(run.createdAt), run.id);
      multi.zremrangebyrank(recentKey, 0, -keepRecent - 1);
      await multi.exec();
    },
    async activeByState() {
      const counts = new Map<string, number>();
      for (const state of await redis.hvals(activeKey)) counts.set(state, (counts.get(state) ?? 0) + 1);
      return counts;
    },
    recent: (limit) => redis.zrevrange(recentKey, 0, limit - 1),
  };
}
