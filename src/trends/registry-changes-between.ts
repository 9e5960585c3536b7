import type { Redis } from "ioredis";
import { readPayloadChanges } from "../payload/read-payload-changes.ts";
import type { Registry } from "../registry/create-registry.ts";
import { cachePayloadChanges, type ChangesBetween } from "./payload-changes-cache.ts";

const PAIR_TIMEOUT_MS = 60_000;

/** What changed between two payloads, read through the registry client and cached per pair in Redis. */
export function registryChangesBetween(options: {
  redis: Redis;
  prefix: string;
  registry: Registry;
}): ChangesBetween {
  return cachePayloadChanges({
    redis: options.redis,
    prefix: options.prefix,
    // Each read is bounded: one that takes too long is a reason shown on the page.
    read: (pair) =>
      readPayloadChanges({
        registry: options.registry.withBudget({ signal: AbortSignal.timeout(PAIR_TIMEOUT_MS) }),
        ...pair,
      }),
  });
}
