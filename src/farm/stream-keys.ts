import { createHmac, randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";
import { STREAM_KEY_BYTES } from "./record-stream.ts";

/** The stream key of a build-farm Job (see createStreamSigner), by the Job's name. */
export type StreamKeys = (jobName: string) => Promise<Buffer>;

/**
 * Each Job's stream key derives from one random secret of the deployment, kept in Redis (made by
 * whichever replica needs it first): every replica, and a restarted bot adopting a running Job,
 * derives the same key without storing one per Job or reading the Job's Secret back. Job names
 * differ per run, iteration, arm and attempt, so no two pods share a key.
 */
export function createStreamKeys(options: { redis: Redis; prefix: string }): StreamKeys {
  const key = redisKeys(options.prefix).farmStreamSecret;
  let secret: Promise<Buffer> | undefined;
  const load = async () => {
    await options.redis.set(key, randomBytes(STREAM_KEY_BYTES).toString("hex"), "NX");
    const stored = await options.redis.get(key);
    if (!stored) throw new Error(`${key} vanished while it was read`);
    return Buffer.from(stored, "hex");
  };
  return async (jobName) => {
    secret ??= load().catch((error: unknown) => {
      secret = undefined;
      throw error;
    });
    return createHmac("sha256", await secret)
      .update(jobName)
      .digest();
  };
}
