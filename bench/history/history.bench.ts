/**
 * History pool speed for 5,000 tests (goal: update and read under 100 ms each). Starts its own
 * redis-server on loopback, pools 300 runs, then times each operation; prints medians and p90.
 *
 *   npm run bench:history        (or: node --import tsx bench/history/history.bench.ts)
 */
import { Redis } from "ioredis";
import { createHistoryStore, type HistoryTestCounts } from "../../src/history/history-store.ts";
import { startRedis } from "../../test/helpers/start-redis.ts";

const TESTS = 5000;
const RUNS = 300;
const REPEATS = 30;

const server = await startRedis();
const redis = new Redis(server.url);
try {
  const names = Array.from(
    { length: TESTS },
    (_, i) =>
      `[sig-network] [Feature:Stress] networking test number ${i} should keep working across restarts [Suite:openshift/conformance/parallel]`,
  );
  const countsOf = (run: number): HistoryTestCounts[] =>
    names.map((name, i) => ({ name, runs: 10, passes: (i + run) % 50 === 0 ? 9 : 10 }));
  const pool = { stream: "4.19.0-0.nightly", arch: "amd64" as const };
  const time = async (action: () => Promise<unknown>) => {
    const start = performance.now();
    await action();
    return performance.now() - start;
  };
  const summary = (label: string, samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
    console.log(
      `${label.padEnd(58)} median ${at(0.5).padStart(6)} ms   p90 ${at(0.9).padStart(6)} ms   (n=${samples.length})`,
    );
  };

  // Every sample of the "new names" rows uses a pool of its own, so its names really are new.
  const firstRecord: number[] = [];
  for (let i = 0; i < 10; i++) {
    const store = createHistoryStore({ redis, prefix: `bench-new-${i}` });
    firstRecord.push(await time(() => store.record({ ...pool, runId: "first", tests: countsOf(0) })));
  }

  const store = createHistoryStore({ redis, prefix: "bench" });
  for (let run = 0; run < RUNS; run++)
    await store.record({ ...pool, runId: `run-${run}`, tests: countsOf(run) });
  const coldRead: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const fresh = createHistoryStore({ redis, prefix: "bench" });
    coldRead.push(await time(() => fresh.read(pool)));
  }
  const warmRead: number[] = [];
  for (let i = 0; i < REPEATS; i++) warmRead.push(await time(() => store.read(pool)));
  const pooled = await store.read(pool);
  const warmRecord: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    warmRecord.push(await time(() => store.record({ ...pool, runId: `warm-${i}`, tests: countsOf(i) })));
  }
  const restartedRecord: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const fresh = createHistoryStore({ redis, prefix: "bench" });
    restartedRecord.push(
      await time(() => fresh.record({ ...pool, runId: `restarted-${i}`, tests: countsOf(i) })),
    );
  }

  console.log(`history pool: ${TESTS} tests, ${pooled.runs} runs pooled, node ${process.version}`);
  summary("update, names new to Redis (first run of a stream)", firstRecord);
  summary("update, names known to this process", warmRecord);
  summary("update, fresh process (names known to Redis)", restartedRecord);
  summary(`read ${pooled.runs} runs, fresh process (fetches every run)`, coldRead);
  summary(`read ${pooled.runs} runs, warm process (fetches new runs only)`, warmRead);
  const keys = await redis.keys("bench:*");
  const bytes = await Promise.all(keys.map((key) => redis.memory("USAGE", key, "SAMPLES", "0")));
  const total = bytes.reduce<number>((sum, b) => sum + Number(b ?? 0), 0);
  console.log(
    `memory of the pool (MEMORY USAGE of its ${keys.length} keys): ${(total / 2 ** 20).toFixed(1)} MiB`,
  );
  console.log(
    `load average while measuring: ${(await import("node:os"))
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
} finally {
  await redis.quit();
  await server.stop();
}
