import type { Redis } from "ioredis";
import type { Arch } from "../arch/arch.ts";
import type { PayloadCounts } from "../analysis/payload-counts.ts";
import { readPayloadChanges } from "../payload/read-payload-changes.ts";
import type { Registry } from "../registry/create-registry.ts";
import type { TrendView } from "../report/trend-view.ts";
import { loadStreamTrends } from "./load-stream-trends.ts";
import { cachePayloadChanges } from "./payload-changes-cache.ts";

const PAIR_TIMEOUT_MS = 60_000;

/**
 * The trends of any stream and arch from the bot's parts: the history store, and payloads read
 * through the registry client with their changes cached per pair in Redis. `serve`'s page and
 * `netstress trends` both read through this, so they show the same thing.
 */
export function createStreamTrends(options: {
  history: { readPayloadHistory(input: { stream: string; arch: Arch }): Promise<PayloadCounts[]> };
  redis: Redis;
  prefix: string;
  registry: Registry;
}): (input: { stream: string; arch: Arch }) => Promise<TrendView> {
  const changesBetween = cachePayloadChanges({
    redis: options.redis,
    prefix: options.prefix,
    // A page waits for its pairs: each read is bounded, and one that takes too long is a reason shown.
    read: (pair) =>
      readPayloadChanges({
        registry: options.registry.withBudget({ signal: AbortSignal.timeout(PAIR_TIMEOUT_MS) }),
        ...pair,
      }),
  });
  return (input) => loadStreamTrends({ history: options.history, changesBetween, ...input });
}
