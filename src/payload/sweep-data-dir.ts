import { lstat, readdir, rm } from "node:fs/promises";
import { join } from "node:path";

/** What one sweep removed and kept. */
export interface SweepReport {
  removedRuns: string[];
  /** Runs old enough to go that were kept because they are still active. */
  keptActiveRuns: string[];
  removedBinaries: number;
  /** Bytes whose last link went (a file still linked elsewhere frees nothing). */
  freedBytes: number;
  durationMs: number;
}

export interface SweepDataDirOptions {
  /** The bot's data directory: `runs/<run id>/`, `binaries/`, `cache/binaries/`, `cache/tmp/`. */
  dataDir: string;
  /** Run data unused for longer than this goes. */
  maxAgeMs: number;
  /** Binaries unused for longer than this go (default maxAgeMs): they are most of the bytes. */
  binaryMaxAgeMs?: number;
  /** Asked before a run's directory goes: an active run's never does, however old. */
  isRunActive: (runId: string) => Promise<boolean>;
  now?: () => number;
}

interface Entry {
  path: string;
  /** The newest change of the entry or anything directly in it (mtime or ctime). */
  lastUsedMs: number;
}

/**
 * Removes what a bot's data directory accumulates: the directories of runs that ended more than
 * `maxAgeMs` ago, the unpacked binaries (`binaries/`) and the binaries fetched for runs (`cache/binaries/`)
 * no run used for `binaryMaxAgeMs`, and downloads a crash left in `cache/tmp/`. A binary's use shows in
 * its ctime (each run links or marks it executable), so no bookkeeping is needed beside the files.
 * Once its fetched link is gone, the content cache can evict the blob and really free it.
 */
export async function sweepDataDir(options: SweepDataDirOptions): Promise<SweepReport> {
  const now = options.now ?? Date.now;
  const started = Date.now();
  const cutoff = now() - options.maxAgeMs;
  const binaryCutoff = now() - (options.binaryMaxAgeMs ?? options.maxAgeMs);
  const report: SweepReport = {
    removedRuns: [],
    keptActiveRuns: [],
    removedBinaries: 0,
    freedBytes: 0,
    durationMs: 0,
  };
  const remove = async (path: string) => {
    report.freedBytes += await exclusiveBytes(path);
    await rm(path, { recursive: true, force: true });
  };

  for (const run of await entries(join(options.dataDir, "runs"))) {
    if (run.lastUsedMs >= cutoff) continue;
    const runId = run.path.slice(run.path.lastIndexOf("/") + 1);
    if (await options.isRunActive(runId)) {
      report.keptActiveRuns.push(runId);
      continue;
    }
    await remove(run.path);
    report.removedRuns.push(runId);
  }
  for (const dir of ["binaries", join("cache", "binaries"), join("cache", "tmp")]) {
    for (const entry of await entries(join(options.dataDir, dir))) {
      if (entry.lastUsedMs >= binaryCutoff) continue;
      await remove(entry.path);
      if (!dir.endsWith("tmp")) report.removedBinaries++;
    }
  }
  report.durationMs = Date.now() - started;
  return report;
}

/** The entries of a directory with when each was last used; none when the directory is missing. */
async function entries(dir: string): Promise<Entry[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const found = await Promise.all(
    names.map(async (name): Promise<Entry | undefined> => {
      const path = join(dir, name);
      const info = await lstat(path).catch(() => undefined);
      if (!info) return undefined;
      let lastUsedMs = Math.max(info.mtimeMs, info.ctimeMs);
      if (info.isDirectory()) {
        for (const child of await readdir(path).catch(() => [] as string[])) {
          const inner = await lstat(join(path, child)).catch(() => undefined);
          if (inner) lastUsedMs = Math.max(lastUsedMs, inner.mtimeMs, inner.ctimeMs);
        }
      }
      return { path, lastUsedMs };
    }),
  );
  return found.filter((e) => e !== undefined);
}

/** Bytes on disk of the files under a path that have no other link. */
async function exclusiveBytes(path: string): Promise<number> {
  const info = await lstat(path).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.nlink === 1 ? info.blocks * 512 : 0;
  let total = 0;
  for (const name of await readdir(path).catch(() => [] as string[]))
    total += await exclusiveBytes(join(path, name));
  return total;
}
