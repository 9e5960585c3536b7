/**
 * GitHub's write budget under many concurrent runs of one installation, on a private redis-server:
 * each run publishes its progress through the bot's own coalescer (at most one check-run update
 * per interval, only the newest) and the bot's own write budget (78 writes a minute, shared by
 * every process), and at a moment spread over the second
 * half it ends with a final update (its conclusion), as `flush` sends it.
 *
 *   node --import tsx bench/app/github-write-budget.bench.ts [--scale 30] [--minutes 4] [--runs 10,20,40,80]
 *
 * Time runs SCALE times faster than the bot's (a 2 s window for GitHub's minute, progress every 0.5 s
 * for every 15 s); every figure printed is in the bot's time. Per run count: check-run writes a
 * minute (and the most seen in any minute, as observed after each grant: what GitHub counts by
 * arrival), the gap between one run's successive updates (median and largest), and how long a
 * run's final update waited (median, 90th percentile, largest).
 */
import { Redis } from "ioredis";
import { createGitHubWriteBudget, GITHUB_WRITES_PER_MINUTE } from "../../src/github/github-write-budget.ts";
import { createCoalescer } from "../../src/queue/coalesce.ts";
import { startRedis } from "../../test/helpers/start-redis.ts";

const flag = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1]! : fallback;
};
const SCALE = Number(flag("scale", "30"));
const MINUTES = Number(flag("minutes", "4"));
const RUN_COUNTS = flag("runs", "10,20,40,80").split(",").map(Number);
/** The bot's progress interval (process-execute's default) and how often an executor reports. */
const PROGRESS_MS = 15_000;
const REPORT_MS = 2_000;

const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};
const seconds = (ms: number) => `${((ms * SCALE) / 1000).toFixed(1)} s`;

async function measure(redis: Redis, runs: number) {
  const budget = createGitHubWriteBudget({
    redis,
    prefix: `bench-${runs}-${Date.now()}`,
    installationId: 1,
    windowMs: 60_000 / SCALE,
  });
  const lasting = (MINUTES * 60_000) / SCALE;
  const started = performance.now();
  const writes: number[] = [];
  const gaps: number[] = [];
  const finals: number[] = [];
  await Promise.all(
    Array.from({ length: runs }, async (_, run) => {
      let last = started;
      const updates = createCoalescer({
        intervalMs: PROGRESS_MS / SCALE,
        task: async () => {
          await budget.acquire();
          const now = performance.now();
          writes.push(now);
          gaps.push(now - last);
          last = now;
        },
        onError: (error) => console.error(error),
      });
      // Runs end anywhere in the second half, deterministically spread.
      const ends = lasting * (0.5 + (0.5 * (run + 0.5)) / runs);
      const reporting = setInterval(() => updates.request(), REPORT_MS / SCALE);
      await new Promise((resolve) => setTimeout(resolve, ends));
      clearInterval(reporting);
      const asked = performance.now();
      updates.request();
      await updates.flush();
      finals.push(performance.now() - asked);
    }),
  );
  // The most writes any window of GitHub's minute saw, and the mean rate while runs were writing.
  writes.sort((a, b) => a - b);
  const windowMs = 60_000 / SCALE;
  let busiest = 0;
  for (let i = 0, j = 0; i < writes.length; i++) {
    while (j < writes.length && writes[j]! - writes[i]! < windowMs) j++;
    busiest = Math.max(busiest, j - i);
  }
  const elapsed = writes.at(-1)! - started;
  return {
    runs,
    perMinute: `${(writes.length / ((elapsed * SCALE) / 60_000)).toFixed(1)} (busiest minute ${busiest})`,
    gap: `${seconds(quantile(gaps, 0.5))} / ${seconds(Math.max(...gaps))}`,
    final: `${seconds(quantile(finals, 0.5))} / ${seconds(quantile(finals, 0.9))} / ${seconds(Math.max(...finals))}`,
  };
}

const server = await startRedis();
const redis = new Redis(server.url);
try {
  console.log(
    `${GITHUB_WRITES_PER_MINUTE} writes a minute, progress every ${PROGRESS_MS / 1000} s, ${MINUTES} minutes, time ×${SCALE}`,
  );
  console.log(
    "| runs at once | writes a minute | a run's update gap: median / largest | final update waited: median / p90 / largest |",
  );
  console.log("| --- | --- | --- | --- |");
  for (const runs of RUN_COUNTS) {
    const r = await measure(redis, runs);
    console.log(`| ${r.runs} | ${r.perMinute} | ${r.gap} | ${r.final} |`);
  }
} finally {
  redis.disconnect();
  await server.stop();
}
