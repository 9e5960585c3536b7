import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { pino } from "pino";
import { inject } from "vitest";
import { createAbortBus } from "../../src/queue/abort-bus.ts";
import type { RunDeps } from "../../src/queue/run-deps.ts";
import { createRunQueues } from "../../src/queue/run-queues.ts";
import { createRunStore, type RunStore } from "../../src/queue/run-store.ts";
import type { PublishRun } from "../../src/runs/run-publisher.ts";

/**
 * The run machinery (store, queues, abort bus) on the test Redis under a fresh prefix, with the
 * publisher the test's subjects need (built from the store and the connection).
 */
export async function runMachinery(
  publisher: (parts: { store: RunStore; redis: Redis; prefix: string }) => PublishRun,
): Promise<{ runs: RunDeps; redis: Redis; prefix: string; close(): Promise<void> }> {
  const redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
  const prefix = `t-${randomUUID()}`;
  const store = createRunStore({ redis, prefix });
  const queues = createRunQueues({ connection: redis, prefix });
  const abortBus = await createAbortBus({ redis, prefix });
  const runs: RunDeps = {
    store,
    queues,
    abortBus,
    publish: publisher({ store, redis, prefix }),
    log: pino({ level: "silent" }),
  };
  return {
    runs,
    redis,
    prefix,
    async close() {
      await queues.close();
      await abortBus.close();
      await redis.quit();
    },
  };
}
