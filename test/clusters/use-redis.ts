import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { startRedis, type RedisServer } from "../helpers/start-redis.ts";

/** A private Redis for the test file (started before its tests, stopped after); read the client in a test. */
export function useRedis(): { readonly client: Redis; readonly url: string } {
  let server: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    server = await startRedis();
    client = new Redis(server.url);
  });
  afterAll(async () => {
    client.disconnect();
    await server.stop();
  });
  return {
    get client() {
      return client;
    },
    get url() {
      return server.url;
    },
  };
}
