import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";

/**
 * Claims an event's redelivery for `claimMs` across every process: the first caller gets true,
 * the others false until the claim lapses (then a redelivery that failed again is asked for again).
 */
export function createRedeliveryClaims(options: {
  redis: Redis;
  prefix: string;
  claimMs: number;
}): (guid: string) => Promise<boolean> {
  const keys = redisKeys(options.prefix);
  return async (guid) =>
    (await options.redis.set(keys.deliveryRedelivery(guid), "1", "PX", options.claimMs, "NX")) === "OK";
}
