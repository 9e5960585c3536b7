import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createHistoryStore } from "../../src/history/history-store.ts";

const DAY = 24 * 3600 * 1000;
let redis: Redis;
let prefixCounter = 0;
const uniquePrefix = () => `test-history-${process.pid}-${Date.now()}-${prefixCounter++}`;

beforeAll(() => {
  redis = new Redis(inject("redisUrl"));
});
afterAll(async () => {
  await redis.quit();
});

/** A clock the test moves by hand. */
function clockAt(iso: string) {
  let current = Date.parse(iso);
  return { now: () => new Date(current), advance: (ms: number) => void (current += ms) };
}

async function keysOf(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== "0");
  return keys;
}

async function memoryOf(prefix: string): Promise<number> {
  const keys = await keysOf(prefix);
  const pipeline = redis.pipeline();
  for (const key of keys) pipeline.memory("USAGE", key, "SAMPLES", "0");
  const replies = (await pipeline.exec()) ?? [];
  return replies.reduce((sum, [, bytes]) => sum + Number(bytes ?? 0), 0);
}

describe("history store", () => {
  it("pools per-test runs and clean passes of every recorded run, per stream and arch", async () => {
    const clock = clockAt("2026-03-10T12:00:00Z");
    const history = createHistoryStore({ redis, prefix: uniquePrefix(), now: clock.now });
    await history.record({
      stream: "4.18.0-0.nightly",
      arch: "amd64",
      runId: "run-a",
      at: new Date("2026-03-08T09:00:00Z"),
      tests: [
        { name: "[sig-network] pods reach pods", runs: 10, passes: 9 },
        { name: "[sig-network] services", runs: 10, passes: 10 },
      ],
    });
    await history.record({
      stream: "4.18.0-0.nightly",
      arch: "amd64",
      runId: "run-b",
      tests: [{ name: "[sig-network] pods reach pods", runs: 20, passes: 15 }],
    });
    // Another arch and another stream are other pools.
    await history.record({
      stream: "4.18.0-0.nightly",
      arch: "arm64",
      runId: "run-c",
      tests: [{ name: "[sig-network] pods reach pods", runs: 5, passes: 0 }],
    });
    await history.record({
      stream: "4.17.0-0.nightly",
      arch: "amd64",
      runId: "run-d",
      tests: [{ name: "[sig-network] services", runs: 5, passes: 0 }],
    });

    const pool = await history.read({ stream: "4.18.0-0.nightly", arch: "amd64" });
    expect(pool.runs).toBe(2);
    expect(pool.from).toBe("2026-03-08T09:00:00.000Z");
    expect(pool.to).toBe("2026-03-10T12:00:00.000Z");
    expect(new Map(pool.tests.map((t) => [t.name, [t.runs, t.passes]]))).toEqual(
      new Map([
        ["[sig-network] pods reach pods", [30, 24]],
        ["[sig-network] services", [10, 10]],
      ]),
    );
  });

  it("adds a run once however often it is recorded", async () => {
    const history = createHistoryStore({ redis, prefix: uniquePrefix() });
    const run = {
      stream: "s",
      arch: "amd64" as const,
      runId: "same",
      tests: [{ name: "t", runs: 10, passes: 7 }],
    };
    expect(await history.record(run)).toBe(true);
    expect(await history.record(run)).toBe(false);
    const results = await Promise.all([1, 2, 3].map(() => history.record({ ...run, runId: "racing" })));
    expect(results.filter(Boolean)).toHaveLength(1);
    const pool = await history.read({ stream: "s", arch: "amd64" });
    expect(pool.runs).toBe(2);
    expect(pool.tests).toEqual([{ name: "t", runs: 20, passes: 14 }]);
  });

  it("forgets runs that leave the window and lets Redis expire what is left behind", async () => {
    const clock = clockAt("2026-03-01T08:00:00Z");
    const prefix = uniquePrefix();
    const history = createHistoryStore({ redis, prefix, windowDays: 3, now: clock.now });
    const record = (runId: string, passes: number) =>
      history.record({ stream: "s", arch: "amd64", runId, tests: [{ name: "t", runs: 10, passes }] });
    await record("day-1", 10);
    clock.advance(DAY);
    await record("day-2", 8);
    clock.advance(DAY);
    await record("day-3", 6);
    expect((await history.read({ stream: "s", arch: "amd64" })).tests).toEqual([
      { name: "t", runs: 30, passes: 24 },
    ]);

    clock.advance(DAY + 1);
    const pool = await history.read({ stream: "s", arch: "amd64" });
    expect(pool).toMatchObject({ runs: 2, from: "2026-03-02T08:00:00.000Z", to: "2026-03-03T08:00:00.000Z" });
    expect(pool.tests).toEqual([{ name: "t", runs: 20, passes: 14 }]);
    // A run older than the window is not pooled at all.
    expect(
      await history.record({
        stream: "s",
        arch: "amd64",
        runId: "late",
        at: new Date("2026-03-01T07:00:00Z"),
        tests: [{ name: "t", runs: 10, passes: 0 }],
      }),
    ).toBe(false);
    // The next run pooled removes the expired run's counts from Redis.
    await record("day-4", 10);
    const keys = await keysOf(prefix);
    // Each of these runs is an entry of its own (no payload given): three entries are left.
    expect(keys.filter((key) => key.includes(":payload:"))).toHaveLength(3);
    // Every key carries an expiry of at most the window and a day.
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(4 * DAY);
    }
  });

  it("keeps at most maxRuns runs, dropping the oldest first", async () => {
    const clock = clockAt("2026-04-01T00:00:00Z");
    const history = createHistoryStore({ redis, prefix: uniquePrefix(), maxRuns: 3, now: clock.now });
    for (let run = 0; run < 5; run++) {
      clock.advance(60_000);
      await history.record({
        stream: "s",
        arch: "s390x",
        runId: `r${run}`,
        tests: [{ name: "t", runs: 1, passes: run % 2 }],
      });
    }
    const pool = await history.read({ stream: "s", arch: "s390x" });
    expect(pool).toMatchObject({ runs: 3, from: "2026-04-01T00:03:00.000Z", to: "2026-04-01T00:05:00.000Z" });
    expect(pool.tests).toEqual([{ name: "t", runs: 3, passes: 1 }]);
  });

  it("starts a new name dictionary past maxNames and still reads runs of the old one", async () => {
    const prefix = uniquePrefix();
    const history = createHistoryStore({ redis, prefix, maxNames: 3 });
    const run = (runId: string, names: string[]) =>
      history.record({
        stream: "s",
        arch: "arm64",
        runId,
        tests: names.map((name) => ({ name, runs: 2, passes: 1 })),
      });
    await run("old", ["a", "b", "c"]);
    await run("renamed", ["a", "b2", "c2"]);
    // A fresh process (no cached ids or names) reads both generations.
    const pool = await createHistoryStore({ redis, prefix }).read({ stream: "s", arch: "arm64" });
    expect(new Map(pool.tests.map((t) => [t.name, t.runs]))).toEqual(
      new Map([
        ["a", 4],
        ["b", 2],
        ["c", 2],
        ["b2", 2],
        ["c2", 2],
      ]),
    );
    expect(await redis.get(`${prefix}:history:s:arm64:gen`)).toBe("1");
  });

  it("refuses counts it cannot store", async () => {
    const history = createHistoryStore({ redis, prefix: uniquePrefix() });
    const record = (runs: number, passes: number) =>
      history.record({
        stream: "s",
        arch: "amd64",
        runId: `r${runs}-${passes}`,
        tests: [{ name: "t", runs, passes }],
      });
    await expect(record(3, 4)).rejects.toThrow(/passes ≤ runs/);
    await expect(record(70_000, 1)).rejects.toThrow(/65535/);
  });

  it("holds 5,000 tests × 300 runs in under 4 MiB, and no more than maxRuns runs' worth", async () => {
    const names = Array.from(
      { length: 5000 },
      (_, i) =>
        `[sig-network] [Feature:Stress] networking test number ${i} should keep working across restarts [Suite:openshift/conformance/parallel]`,
    );
    const start = Date.parse("2026-05-07T00:00:00Z");
    const clock = clockAt("2026-05-20T23:00:00Z");
    // Test i fails one of its 10 iterations in run r when (i + r) % 50 === 0.
    const recordRuns = (history: ReturnType<typeof createHistoryStore>, from: number, to: number) =>
      Promise.all(
        Array.from({ length: to - from }, (_, k) => {
          const run = from + k;
          return history.record({
            stream: "4.19.0-0.nightly",
            arch: "amd64",
            runId: `run-${run}`,
            at: new Date(start + run * 3600_000),
            tests: names.map((name, i) => ({ name, runs: 10, passes: (i + run) % 50 === 0 ? 9 : 10 })),
          });
        }),
      );

    const prefix = uniquePrefix();
    const pooled = createHistoryStore({ redis, prefix, now: clock.now });
    await recordRuns(pooled, 0, 300);
    const memory = await memoryOf(prefix);
    // 300 runs × 5,000 tests × about a byte, plus the 5,000 names (about 120 characters) once.
    expect(memory).toBeLessThan(4 * 1024 * 1024);
    const pool = await pooled.read({ stream: "4.19.0-0.nightly", arch: "amd64" });
    expect(pool.runs).toBe(300);
    expect(pool.from).toBe(new Date(start).toISOString());
    expect(pool.tests).toHaveLength(5000);
    const expected = (i: number) => {
      let failures = 0;
      for (let run = 0; run < 300; run++) if ((i + run) % 50 === 0) failures++;
      return { name: names[i], runs: 3000, passes: 3000 - failures };
    };
    const byName = new Map(pool.tests.map((t) => [t.name, t]));
    for (const i of [0, 1, 49, 2500, 4999]) expect(byName.get(names[i]!)).toEqual(expected(i));

    // With a cap of 100 runs, 200 more runs cost nothing more.
    const cappedPrefix = uniquePrefix();
    const capped = createHistoryStore({ redis, prefix: cappedPrefix, maxRuns: 100, now: clock.now });
    await recordRuns(capped, 0, 100);
    const atCap = await memoryOf(cappedPrefix);
    await recordRuns(capped, 100, 300);
    expect(await memoryOf(cappedPrefix)).toBeLessThanOrEqual(atCap * 1.02);
    // Uncapped, the 200 runs beyond 100 cost their counts: about 5 kB each.
    expect(memory - atCap).toBeGreaterThan(200 * 4_000);
    expect((await capped.read({ stream: "4.19.0-0.nightly", arch: "amd64" })).runs).toBe(100);
  });
});
