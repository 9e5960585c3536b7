import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createHistoryStore } from "../../src/history/history-store.ts";

let redis: Redis;
let prefixCounter = 0;
const uniquePrefix = () => `test-payload-history-${process.pid}-${Date.now()}-${prefixCounter++}`;

beforeAll(() => {
  redis = new Redis(inject("redisUrl"));
});
afterAll(async () => {
  await redis.quit();
});

const STREAM = "4.19.0-0.nightly";
const nightly = (day: number) => ({
  release: `4.19.0-0.nightly-2026-12-0${day}-000000`,
  pullspec: `registry.ci.example/ocp/release@sha256:${String(day).repeat(64).slice(0, 64)}`,
});
const at = (day: number, hour = 0) => new Date(`2026-12-0${day}T${String(hour).padStart(2, "0")}:00:00Z`);
const now = () => new Date("2026-12-09T00:00:00Z");

describe("history per payload", () => {
  it("merges the runs of one payload into one entry, oldest payload first, and pools their sum", async () => {
    const prefix = uniquePrefix();
    const history = createHistoryStore({ redis, prefix, now });
    const pool = { stream: STREAM, arch: "arm64" as const };
    // Two runs of the second nightly (in the order they finished), one of the first.
    await history.record({
      ...pool,
      runId: "second-b",
      at: at(2, 6),
      payload: nightly(2),
      tests: [
        { name: "dns", runs: 10, passes: 6, flakes: 1, clusters: 2 },
        { name: "egress", runs: 10, passes: 10, clusters: 2 },
      ],
    });
    await history.record({
      ...pool,
      runId: "first",
      at: at(1),
      payload: nightly(1),
      tests: [{ name: "dns", runs: 20, passes: 20, clusters: 4 }],
    });
    await history.record({
      ...pool,
      runId: "second-a",
      at: at(2, 1),
      payload: nightly(2),
      tests: [
        { name: "dns", runs: 10, passes: 8, flakes: 2, clusters: 3 },
        { name: "new test", runs: 5, passes: 5, clusters: 3 },
      ],
    });

    expect(await history.readPayloadHistory(pool)).toEqual([
      {
        release: nightly(1).release,
        payload: nightly(1).pullspec,
        recordedAt: "2026-12-01T00:00:00.000Z",
        runs: 1,
        tests: { dns: { executions: 20, failures: 0, flakes: 0, clusters: 4 } },
      },
      {
        release: nightly(2).release,
        payload: nightly(2).pullspec,
        recordedAt: "2026-12-02T01:00:00.000Z",
        runs: 2,
        tests: {
          dns: { executions: 20, failures: 3, flakes: 3, clusters: 5 },
          egress: { executions: 10, failures: 0, flakes: 0, clusters: 2 },
          "new test": { executions: 5, failures: 0, flakes: 0, clusters: 3 },
        },
      },
    ]);
    // A fresh process reads the same.
    expect(await createHistoryStore({ redis, prefix, now }).readPayloadHistory(pool)).toEqual(
      await history.readPayloadHistory(pool),
    );
    const pooled = await history.read(pool);
    expect(pooled).toMatchObject({
      runs: 3,
      from: "2026-12-01T00:00:00.000Z",
      to: "2026-12-02T06:00:00.000Z",
    });
    expect(new Map(pooled.tests.map((t) => [t.name, [t.runs, t.passes]]))).toEqual(
      new Map([
        ["dns", [40, 34]],
        ["egress", [10, 10]],
        ["new test", [5, 5]],
      ]),
    );
  });

  it("counts every run of a payload that several processes record at once, each once", async () => {
    const prefix = uniquePrefix();
    const processes = [1, 2, 3].map(() => createHistoryStore({ redis, prefix, now }));
    const runs = Array.from({ length: 24 }, (_, i) => i);
    const added = await Promise.all(
      runs.flatMap((i) =>
        // Every run is recorded twice, by two processes (a retried worker).
        [i % 3, (i + 1) % 3].map((p) =>
          processes[p]!.record({
            stream: STREAM,
            arch: "amd64",
            runId: `run-${i}`,
            at: at(3, i % 20),
            payload: nightly(3),
            tests: [{ name: "t", runs: 10, passes: 10 - (i % 2), clusters: 1 }],
          }),
        ),
      ),
    );
    expect(added.filter(Boolean)).toHaveLength(24);
    const [entry] = await processes[0]!.readPayloadHistory({ stream: STREAM, arch: "amd64" });
    expect(entry).toMatchObject({
      runs: 24,
      tests: { t: { executions: 240, failures: 12, flakes: 0, clusters: 24 } },
    });
  });

  it("names a payload by its pullspec when the release is not known, and keeps runs of no known payload out of it", async () => {
    const history = createHistoryStore({ redis, prefix: uniquePrefix(), now });
    const pool = { stream: STREAM, arch: "amd64" as const };
    await history.record({
      ...pool,
      runId: "gate",
      at: at(4),
      payload: { pullspec: nightly(4).pullspec },
      tests: [{ name: "t", runs: 4, passes: 3 }],
    });
    await history.record({ ...pool, runId: "pr", at: at(5), tests: [{ name: "t", runs: 6, passes: 6 }] });
    const payloads = await history.readPayloadHistory(pool);
    expect(payloads.map((p) => [p.release, p.payload, p.runs])).toEqual([
      [nightly(4).pullspec, nightly(4).pullspec, 1],
    ]);
    // The run of no known payload is still pooled.
    expect((await history.read(pool)).tests).toEqual([{ name: "t", runs: 10, passes: 9 }]);
  });

  it("keeps at most maxPayloads payloads, and a payload leaves when no run joined it for the window", async () => {
    let clock = at(1).getTime();
    const history = createHistoryStore({
      redis,
      prefix: uniquePrefix(),
      maxPayloads: 2,
      windowDays: 3,
      now: () => new Date(clock),
    });
    const pool = { stream: STREAM, arch: "amd64" as const };
    const record = (runId: string, day: number) =>
      history.record({
        ...pool,
        runId,
        at: new Date(clock),
        payload: nightly(day),
        tests: [{ name: "t", runs: 1, passes: 1 }],
      });
    await record("a", 1);
    clock += 24 * 3600_000;
    await record("b", 2);
    clock += 24 * 3600_000;
    await record("c", 3);
    expect((await history.readPayloadHistory(pool)).map((p) => p.release)).toEqual([
      nightly(2).release,
      nightly(3).release,
    ]);
    // The second nightly keeps getting runs: it stays past its first run's window; the third leaves.
    clock += 2 * 24 * 3600_000;
    await record("b-again", 2);
    clock += 1.5 * 24 * 3600_000;
    await record("b-once-more", 2);
    const left = await history.readPayloadHistory(pool);
    expect(left.map((p) => [p.release, p.runs, p.recordedAt])).toEqual([
      [nightly(2).release, 3, "2026-12-02T00:00:00.000Z"],
    ]);
  });

  it("carries a payload's tests over when the name dictionary starts a new generation", async () => {
    const prefix = uniquePrefix();
    const history = createHistoryStore({ redis, prefix, maxNames: 2, now });
    const pool = { stream: STREAM, arch: "s390x" as const };
    await history.record({
      ...pool,
      runId: "one",
      at: at(6),
      payload: nightly(6),
      tests: [
        { name: "a", runs: 2, passes: 1 },
        { name: "b", runs: 2, passes: 2 },
      ],
    });
    await history.record({
      ...pool,
      runId: "two",
      at: at(6, 1),
      payload: nightly(6),
      tests: [
        { name: "a", runs: 2, passes: 2 },
        { name: "c", runs: 2, passes: 0 },
      ],
    });
    const [entry] = await createHistoryStore({ redis, prefix, now }).readPayloadHistory(pool);
    expect(entry!.tests).toEqual({
      a: { executions: 4, failures: 1, flakes: 0 },
      b: { executions: 2, failures: 0, flakes: 0 },
      c: { executions: 2, failures: 2, flakes: 0 },
    });
    // The second run's names did not fit the first dictionary: the entry moved to a newer one.
    expect(Number(await redis.get(`${prefix}:history:${STREAM}:s390x:gen`))).toBeGreaterThan(0);
  });

  it("refuses flakes that exceed the iterations that did not pass", async () => {
    const history = createHistoryStore({ redis, prefix: uniquePrefix(), now });
    await expect(
      history.record({
        stream: STREAM,
        arch: "amd64",
        runId: "r",
        tests: [{ name: "t", runs: 10, passes: 8, flakes: 3 }],
      }),
    ).rejects.toThrow(/passes \+ flakes ≤ runs/);
  });
});
