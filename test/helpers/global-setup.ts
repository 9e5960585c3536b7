import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { startRedis, type RedisServer } from "./start-redis.ts";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let redis: RedisServer | undefined;

/** One private Redis for the whole run; tests isolate themselves with unique queue names/prefixes. */
export async function setup(project: TestProject): Promise<void> {
  redis = await startRedis();
  project.provide("redisUrl", redis.url);
}

export async function teardown(): Promise<void> {
  await redis?.stop();
}
