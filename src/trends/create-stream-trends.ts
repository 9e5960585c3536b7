import type { Redis } from "ioredis";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { PayloadCounts } from "../analysis/payload-counts.ts";
import type { Registry } from "../registry/create-registry.ts";
import type { TrendView } from "../report/trend-view.ts";
import { loadStreamTrends } from "./load-stream-trends.ts";
import { registryChangesBetween } from "./registry-changes-between.ts";

/**
 * The trends of any stream and arch from the bot's parts: the history store, and payloads read
 * through the registry client with their changes cached per pair in Redis, computed on the spot
 * (`netstress trends`; the page serves stored views, see createStoredTrendViews).
 */
export function createStreamTrends(options: {
  history: { readPayloadHistory(input: { stream: string; arch: Arch }): Promise<PayloadCounts[]> };
  redis: Redis;
  prefix: string;
  registry: Registry;
}): (input: { stream: string; arch: Arch }) => Promise<TrendView> {
  const changesBetween = registryChangesBetween(options);
  return (input) => loadStreamTrends({ history: options.history, changesBetween, ...input });
}
