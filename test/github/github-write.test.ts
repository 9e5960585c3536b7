import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { createGitHubWriteBudget } from "../../src/github/github-write-budget.ts";
import { githubWrite, rateLimitWaitMs } from "../../src/github/github-write.ts";
import { testOctokit } from "../helpers/github-octokit.ts";

let env: { redis: Redis; prefix: string };
beforeEach(() => {
  env = { redis: new Redis(inject("redisUrl")), prefix: `t-${randomUUID()}` };
  nock.disableNetConnect();
});
afterEach(async () => {
  await env.redis.quit();
  nock.cleanAll();
  nock.enableNetConnect();
});

const comment = () =>
  testOctokit().rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "hello" });

describe("GitHub writes", () => {
  it("waits as long as retry-after says, for every process, then succeeds", async () => {
    const shared = createGitHubWriteBudget({ redis: env.redis, prefix: env.prefix, installationId: 1 });
    let paused!: () => void;
    const pauseSet = new Promise<void>((resolve) => (paused = resolve));
    const budget = { ...shared, pause: (ms: number) => shared.pause(ms).then(paused) };
    const other = createGitHubWriteBudget({ redis: env.redis, prefix: env.prefix, installationId: 1 });
    const times: number[] = [];
    nock("https://api.github.com")
      .post("/repos/o/r/issues/1/comments")
      .reply(() => {
        times.push(Date.now());
        return [429, { message: "You have exceeded a secondary rate limit" }, { "retry-after": "1" }];
      })
      .post("/repos/o/r/issues/1/comments")
      .reply(() => {
        times.push(Date.now());
        return [201, { id: 5 }];
      });
    const started = Date.now();
    const written = githubWrite(budget, comment);
    // Another process asking for a write while the pause is in force waits for it too (asked once
    // the 429 is in, however long a loaded machine takes to get it).
    await pauseSet;
    await other.acquire();
    const otherWaited = Date.now() - started;
    const { data } = await written;
    expect(data.id).toBe(5);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
    expect(otherWaited).toBeGreaterThanOrEqual(950);
  });

  it("does not retry errors that are not rate limits", async () => {
    const budget = createGitHubWriteBudget({ redis: env.redis, prefix: env.prefix, installationId: 1 });
    nock("https://api.github.com")
      .post("/repos/o/r/issues/1/comments")
      .reply(403, { message: "Resource not accessible" });
    await expect(githubWrite(budget, comment)).rejects.toMatchObject({ status: 403 });
  });

  it("keeps writes within the per-minute budget across processes, with room for writes that reach GitHub late", async () => {
    const budget = () =>
      createGitHubWriteBudget({
        redis: env.redis,
        prefix: env.prefix,
        installationId: 1,
        perMinute: 4,
        windowMs: 600,
      });
    const [a, b] = [budget(), budget()];
    const started = Date.now();
    const granted: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a : b).acquire().then(() => granted.push(Date.now() - started)),
      ),
    );
    granted.sort((x, y) => x - y);
    // Any 600 ms of GitHub's holds at most 4 writes, each arriving up to a twelfth of it (50 ms)
    // after its grant: the 5th is granted 650 ms after the 1st, the 9th 650 ms after the 5th.
    for (let i = 4; i < granted.length; i++)
      expect(granted[i]! - granted[i - 4]!).toBeGreaterThanOrEqual(645);
    expect(granted[9]).toBeGreaterThanOrEqual(1290);
  });

  it("reads GitHub's rate-limit answers", () => {
    const error = (status: number, headers: Record<string, string>, message = "") => ({
      status,
      message,
      response: { headers },
    });
    expect(rateLimitWaitMs(error(403, { "retry-after": "30" }))).toBe(30_000);
    expect(
      rateLimitWaitMs(error(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1100" }), 1_000_000),
    ).toBe(100_000);
    expect(rateLimitWaitMs(error(429, {}))).toBe(60_000);
    expect(rateLimitWaitMs(error(403, {}, "You have exceeded a secondary rate limit"))).toBe(60_000);
    expect(
      rateLimitWaitMs(error(403, { "x-ratelimit-remaining": "12" }, "Resource not accessible")),
    ).toBeUndefined();
    expect(rateLimitWaitMs(error(500, { "retry-after": "1" }))).toBeUndefined();
  });
});
