import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRunStore } from "../../src/queue/run-store.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { controlledExecutor, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

describe("netstress serve at start-up", () => {
  let redis: Redis;
  let bot: TestBot | undefined;

  beforeAll(() => {
    redis = new Redis(inject("redisUrl"));
  });
  afterAll(async () => {
    await bot?.stop();
    await redis.quit();
  });

  it("runs what was accepted but never queued before the last process died, with no farm configured", async () => {
    // Accepted and planned, then the process died before queueing it.
    const queuePrefix = `requeue-${randomUUID()}`;
    const run = runRecord({
      plan: { arch: "amd64", arms: [{ arm: "pr", components: [{ component: "sdn", binary: "/b" }] }] },
    });
    await createRunStore({ redis, prefix: queuePrefix }).create(run);

    const shards = controlledExecutor(["amd64"]);
    bot = await startTestBot({ settings: { queuePrefix }, executor: shards.executor });
    await expect.poll(() => shards.running.has(run.id), { timeout: 20_000 }).toBe(true);
    await shards.complete(run.id);
    await expect.poll(async () => (await bot!.store.get(run.id))?.state).toBe("completed");
    expect((await bot.store.get(run.id))?.conclusion).toBe("success");
  });
});
