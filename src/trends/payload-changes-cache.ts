import type { Redis } from "ioredis";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { PayloadChanges } from "../payload/payload-changes.ts";
import { redisKeys } from "../redis/redis-keys.ts";

/** What changed between two payloads on an arch, or the error that kept it from being known. */
export type ChangesBetween = (pair: {
  from: string;
  to: string;
  arch: Arch;
}) => Promise<PayloadChanges | Error>;

/**
 * The changes between two payloads, read once per pair and kept in Redis for every process: payloads
 * pinned by digest never change, so a pair's changes are kept for `keepDays`. A pair that could not
 * be read is tried again after `retryAfterSeconds`, not on every page view.
 */
export function cachePayloadChanges(options: {
  redis: Redis;
  prefix: string;
  read: (pair: { from: string; to: string; arch: Arch }) => Promise<PayloadChanges>;
  keepDays?: number;
  retryAfterSeconds?: number;
}): ChangesBetween {
  const keys = redisKeys(options.prefix);
  const keep = (options.keepDays ?? 30) * 24 * 3600;
  const retry = options.retryAfterSeconds ?? 600;
  return async (pair) => {
    const key = keys.payloadChanges(pair.arch, pair.from, pair.to);
    const cached = await options.redis.get(key);
    if (cached !== null) {
      const value = JSON.parse(cached) as { changes: PayloadChanges } | { error: string };
      return "error" in value ? new Error(value.error) : value.changes;
    }
    try {
      const changes = await options.read(pair);
      await options.redis.set(key, JSON.stringify({ changes }), "EX", keep);
      return changes;
    } catch (error) {
      const message = (error as Error).message;
      await options.redis.set(key, JSON.stringify({ error: message }), "EX", retry);
      return new Error(message);
    }
  };
}
