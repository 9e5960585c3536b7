// Item: one installation could starve the others of GitHub writes (one global budget, one global
// rate-limit pause), and any GitHub user commenting /test on a public PR cost the bot a reply each
// time. Budgets and pauses are per installation now, and an untrusted user is answered once per PR.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createGitHubWriteBudgets } from "../../src/github/github-write-budget.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { startTestBot } from "../helpers/github-test-bot.ts";

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject("redisUrl"));
});
afterAll(async () => redis.quit());

describe("GitHub write budgets", () => {
  it("keep one installation's spent budget and pause from delaying another's writes", async () => {
    const budgets = createGitHubWriteBudgets({
      redis,
      prefix: `t-${randomUUID()}`,
      perMinute: 3,
      windowMs: 60_000,
    });
    for (let i = 0; i < 3; i++) await budgets(1).acquire();
    await budgets(1).pause(60_000);
    const started = Date.now();
    for (let i = 0; i < 3; i++) await budgets(2).acquire();
    expect(Date.now() - started).toBeLessThan(500);
    // Installation 1 waits: its window is full and GitHub paused it.
    const blocked = new AbortController();
    setTimeout(() => blocked.abort(), 300);
    await expect(budgets(1).acquire(blocked.signal)).rejects.toThrow();
  });
});

describe("an untrusted commenter", () => {
  it("is answered once per PR, however many commands arrive", async () => {
    const t = await startTestBot({ github: { members: ["alice"] } });
    try {
      for (const [i, sender] of ["mallory", "mallory", "trudy", "mallory"].entries()) {
        await t.deliver(
          "issue_comment",
          commentPayload({ body: "/test network-stress", author: sender }),
          `d-${i}`,
        );
      }
      await t.intakeHandled(4);
      expect(t.github.comments().filter((c) => c.includes("Nothing was run"))).toHaveLength(1);
      expect(await t.store.listForPullRequest("openshift", "ovn-kubernetes", 7)).toEqual([]);
    } finally {
      await t.stop();
    }
  });
});
