import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";

export interface AbortBus {
  /** Tells whichever process runs the run to stop it. */
  publish(runId: string, reason: string): Promise<void>;
  /** Aborts `controller` when the run is aborted anywhere; returns the unregister function. */
  register(runId: string, controller: AbortController): () => void;
  close(): Promise<void>;
}

/** Abort requests travel over Redis pub/sub, so any bot process can stop a run another one executes. */
export async function createAbortBus(options: { redis: Redis; prefix: string }): Promise<AbortBus> {
  const channel = redisKeys(options.prefix).abortChannel;
  const subscriber = options.redis.duplicate();
  const controllers = new Map<string, Set<AbortController>>();
  subscriber.on("message", (_channel: string, message: string) => {
    const { runId, reason } = JSON.parse(message) as { runId: string; reason: string };
    for (const controller of controllers.get(runId) ?? []) controller.abort(reason);
  });
  await subscriber.subscribe(channel);
  return {
    async publish(runId, reason) {
      await options.redis.publish(channel, JSON.stringify({ runId, reason }));
    },
    register(runId, controller) {
      const set = controllers.get(runId) ?? new Set();
      set.add(controller);
      controllers.set(runId, set);
      return () => {
        set.delete(controller);
        if (set.size === 0) controllers.delete(runId);
      };
    },
    async close() {
      await subscriber.quit();
    },
  };
}
