import type { Redis } from "ioredis";

/**
 * Claims of one kind shared by every process: the first caller of `claim(id)` gets true, the
 * others false until the claim lapses after `claimMs`.
 */
export function createRedisClaims(options: {
  redis: Redis;
  /** The claim's key (from redisKeys). */
  key: (id: string) => string;
  claimMs: number;
}): (id: string) => Promise<boolean> {
  return async (id) => (await options.redis.set(options.key(id), "1", "PX", options.claimMs, "NX")) === "OK";
}
