/**
 * A month of a bot's runs on disk, with and without retention (goal: disk bounded by the
 * retention window and the cache size, not by the bot's age; a sweep well under a second).
 *
 * Each simulated day, 20 PR runs and 2 gate runs go through what a worker writes: the day's
 * nightly payload brings new binaries for 5 components, each PR run one PR binary of its own; a
 * binary lands in the content cache (gz), is linked into cache/binaries (fetchPlanBinaries) and
 * unpacked into binaries/ (prepareBinary, 4× its size); each run leaves results and a report in
 * runs/<id>/. Sizes are a fixed fraction (SCALE) of real ones, so that a month fits on a shared
 * machine; the figures are scaled back. Days are compressed to at least DAY_MS of wall time; the
 * sweeper reads file times (the clock cannot be faked), so each sweep is given the wall time since
 * the start of the oldest day it must keep as its retention.
 * Three ways to run: no retention; run data and binaries 14 days; run data 14 days, binaries 2.
 *
 *   bash bench/disk/run.sh        (or: node --import tsx bench/disk/month-of-runs.bench.ts)
 */
import { createHash, randomBytes } from "node:crypto";
import { chmod, link, mkdir, mkdtemp, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sweepDataDir } from "../../src/payload/sweep-data-dir.ts";
import { createContentCache } from "../../src/registry/content-cache.ts";
import { diskUsage } from "../../test/helpers/disk-usage.ts";

const SCALE = 1 / 1000;
const MiB = 1024 * 1024;
const DAYS = 30;
const DAY_MS = 300;
const RETENTION_DAYS = 14;
const PR_RUNS_PER_DAY = 20;
const GATE_RUNS_PER_DAY = 2;
const NIGHTLY_COMPONENTS = 5;
/** A gzipped OTE binary (openshift-tests' is larger, most extensions smaller) and its results. */
const REAL = {
  binaryGz: 120 * MiB,
  unpackFactor: 4,
  results: 1.5 * MiB,
  report: 0.6 * MiB,
  cache: 4 * 1024 * MiB,
};
const size = (bytes: number) => Math.max(1, Math.round(bytes * SCALE));

interface Binary {
  digest: string;
  name: string;
}

async function month(options: { retention?: { runDays: number; binaryDays: number } }) {
  const dataDir = await mkdtemp(join(tmpdir(), "netstress-disk-bench-"));
  const cacheDir = join(dataDir, "cache");
  // A blob is "recent" for a compressed day, as it is for five real minutes.
  const cache = createContentCache({ dir: cacheDir, maxBytes: size(REAL.cache), keepRecentMs: DAY_MS / 2 });
  const dayStarts: number[] = [];
  const usage: number[] = [];
  const sweeps: number[] = [];
  let runs = 0;

  /** A new binary: into the cache, as the registry puts what it found. */
  const fetchBinary = async (name: string): Promise<Binary> => {
    const bytes = randomBytes(size(REAL.binaryGz));
    const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    const temp = await cache.tempPath();
    await writeFile(temp, bytes);
    await cache.adopt(temp, digest, bytes.length);
    return { digest, name };
  };
  /** What a run does with a binary: materialize (link, or mark used) and unpack (or mark executable). */
  const useBinary = async (binary: Binary) => {
    const hex = binary.digest.slice("sha256:".length);
    const dir = join(cacheDir, "binaries", hex.slice(0, 32));
    const linked = join(dir, `${binary.name}.gz`);
    if (await stat(linked).catch(() => undefined)) {
      const now = new Date();
      await utimes(linked, now, now);
    } else {
      await mkdir(dir, { recursive: true });
      await link(cache.blobPath(binary.digest), linked);
    }
    const unpacked = join(dataDir, "binaries", `${hex.slice(0, 16)}-${binary.name}`);
    if (!(await stat(unpacked).catch(() => undefined))) {
      await mkdir(join(dataDir, "binaries"), { recursive: true });
      await writeFile(unpacked, randomBytes(size(REAL.binaryGz * REAL.unpackFactor)));
    }
    await chmod(unpacked, 0o755);
  };
  const writeRun = async (binaries: Binary[]) => {
    const dir = join(dataDir, "runs", `run-${runs++}`);
    await mkdir(join(dir, "shards", "s0"), { recursive: true });
    await mkdir(join(dir, "report"), { recursive: true });
    for (const binary of binaries) await useBinary(binary);
    await writeFile(join(dir, "shards", "s0", "results.jsonl"), randomBytes(size(REAL.results)));
    await writeFile(join(dir, "report", "index.html"), randomBytes(size(REAL.report)));
  };

  for (let day = 0; day < DAYS; day++) {
    const dayStart = Date.now();
    dayStarts.push(dayStart);
    const nightly = await Promise.all(
      Array.from({ length: NIGHTLY_COMPONENTS }, (_, i) => fetchBinary(`component-${i}-tests-ext`)),
    );
    for (let r = 0; r < GATE_RUNS_PER_DAY; r++) await writeRun(nightly);
    for (let r = 0; r < PR_RUNS_PER_DAY; r++) {
      const pr = await fetchBinary(`component-${r % NIGHTLY_COMPONENTS}-tests-ext`);
      // A PR run: its own binary beside the nightly baseline of the same component.
      await writeRun([pr, nightly[r % NIGHTLY_COMPONENTS]!]);
    }
    await cache.settled();
    const elapsed = Date.now() - dayStart;
    if (elapsed < DAY_MS) await new Promise((resolve) => setTimeout(resolve, DAY_MS - elapsed));
    if (options.retention) {
      // Keep the last N days: everything since the start of the oldest of them.
      const window = (days: number) =>
        day + 1 > days ? Date.now() - dayStarts[day + 1 - days]! : Number.MAX_SAFE_INTEGER;
      const report = await sweepDataDir({
        dataDir,
        maxAgeMs: window(options.retention.runDays),
        binaryMaxAgeMs: window(options.retention.binaryDays),
        isRunActive: async () => false,
      });
      sweeps.push(report.durationMs);
    }
    usage.push(await diskUsage(dataDir));
  }
  // One sweep over whatever the month left, timed whether or not it removes anything.
  const last = await sweepDataDir({ dataDir, maxAgeMs: 365 * DAY_MS, isRunActive: async () => false });
  await rm(dataDir, { recursive: true, force: true });
  return { usage, sweeps, lastSweepMs: last.durationMs, runs };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const real = (bytes: number) => `${(bytes / SCALE / 1024 ** 3).toFixed(1)} GiB`;

const without = await month({});
const fortnight = await month({ retention: { runDays: RETENTION_DAYS, binaryDays: RETENTION_DAYS } });
const short = await month({ retention: { runDays: RETENTION_DAYS, binaryDays: 2 } });
console.log(`${without.runs} runs over ${DAYS} days; sizes × ${SCALE} on disk, shown scaled back`);
console.log("day   no retention   runs+binaries 14 d   runs 14 d, binaries 2 d");
for (const day of [0, 1, 6, 13, 14, 20, 29])
  console.log(
    `${String(day + 1).padStart(3)}   ${real(without.usage[day]!).padStart(12)}   ${real(fortnight.usage[day]!).padStart(18)}   ${real(short.usage[day]!).padStart(23)}`,
  );
const last = (m: { usage: number[] }) => m.usage[DAYS - 1]!;
console.log(
  `day 30, no retention ÷ each: ${(last(without) / last(fortnight)).toFixed(2)}× and ${(last(without) / last(short)).toFixed(2)}×`,
);
for (const [label, m] of [
  ["14 d", fortnight],
  ["binaries 2 d", short],
] as const)
  console.log(
    `sweep (${label}, days 15–30): median ${median(m.sweeps.slice(RETENTION_DAYS)).toFixed(0)} ms, max ${Math.max(...m.sweeps).toFixed(0)} ms`,
  );
console.log(`one sweep over a whole month of data (nothing removed): ${without.lastSweepMs.toFixed(0)} ms`);
