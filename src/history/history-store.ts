import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";
import { redisScripts } from "../redis/redis-scripts.ts";
import type { Arch } from "../arch/arch.ts";
import {
  decodeRunCounts,
  encodeRunCounts,
  MINIMUM_ENCODED_BYTES,
  type RunCounts,
} from "./run-counts-codec.ts";

/** One test's counts from one run of the released payload: iterations run and iterations passed cleanly. */
export interface HistoryTestCounts {
  name: string;
  runs: number;
  passes: number;
}

/** A pool as `netstress analyze --history` reads it (historyBaselineSchema): its size and age, and per-test sums. */
export interface PooledHistory {
  stream: string;
  arch: Arch;
  /** Runs pooled. */
  runs: number;
  /** When the oldest and the newest pooled run were recorded (ISO 8601); absent for an empty pool. */
  from?: string;
  to?: string;
  tests: HistoryTestCounts[];
}

export interface HistoryStore {
  /**
   * Adds a run's per-test counts to the pool of its stream and arch. Idempotent per run id: a
   * retried worker adds nothing twice. False when the run was already pooled or is older than the window.
   */
  record(input: {
    stream: string;
    arch: Arch;
    runId: string;
    at?: Date;
    tests: readonly HistoryTestCounts[];
  }): Promise<boolean>;
  /** The pooled counts of the window, in the form `netstress analyze --history` reads. */
  read(input: { stream: string; arch: Arch }): Promise<PooledHistory>;
}

export interface HistoryStoreOptions {
  redis: Redis;
  prefix: string;
  /** Runs older than this leave the pool. */
  windowDays?: number;
  /** At most this many runs per stream and arch; the oldest leave first. */
  maxRuns?: number;
  /** A test-name dictionary that grows past this starts a new one (renamed tests do not pile up forever). */
  maxNames?: number;
  now?: () => Date;
}

const DAY_MS = 24 * 3600 * 1000;
/** Per test and run, iterations run and passed are stored as 16-bit numbers. */
const MAX_COUNT = 0xffff;

/**
 * The pooled history baseline in Redis. Per stream and arch: a sorted set of pooled run ids by time,
 * one small binary value per run (about a byte per test, see run-counts-codec.ts), and a
 * test-name dictionary (name → id, id → name) so names cross the wire and sit in memory once, not
 * once per run. Memory is bounded by maxRuns × dictionary size; runs leave after windowDays, and
 * every key expires by itself once nothing is recorded for that long. Each process keeps the runs it
 * has decoded (at most maxRuns per pool), so a read fetches only runs pooled since its last read.
 */
export function createHistoryStore(options: HistoryStoreOptions): HistoryStore {
  const {
    redis,
    prefix,
    windowDays = 14,
    maxRuns = 500,
    maxNames = 50_000,
    now = () => new Date(),
  } = options;
  if (!Number.isInteger(windowDays) || windowDays < 1)
    throw new RangeError(`windowDays must be a positive integer, got ${windowDays}`);
  const windowMs = windowDays * DAY_MS;
  const base = redisKeys(prefix).historyPool;
  const scripts = redisScripts(redis);
  const namesKey = (stream: string, arch: Arch, gen: number) => `${base(stream, arch)}:names:${gen}`;
  // Ids never change within a generation, so each process keeps what it has seen.
  const idCache = new Map<string, { gen: number; ids: Map<string, number> }>();
  const nameCache = new Map<string, string[]>();
  const runCache = new Map<string, RunCounts>();

  const interning = new Map<string, Promise<unknown>>();

  /** One dictionary update per pool at a time in this process, so concurrent runs send new names once. */
  async function intern(
    stream: string,
    arch: Arch,
    names: readonly string[],
  ): Promise<{ gen: number; ids: number[] }> {
    const key = base(stream, arch);
    const next = (interning.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => internNow(stream, arch, names));
    interning.set(key, next);
    try {
      return await next;
    } finally {
      if (interning.get(key) === next) interning.delete(key);
    }
  }

  async function internNow(
    stream: string,
    arch: Arch,
    names: readonly string[],
  ): Promise<{ gen: number; ids: number[] }> {
    const cached = idCache.get(base(stream, arch));
    if (cached && names.every((name) => cached.ids.has(name))) {
      return { gen: cached.gen, ids: names.map((name) => cached.ids.get(name)!) };
    }
    const reply = (await scripts.historyInternNames(
      `${base(stream, arch)}:gen`,
      base(stream, arch),
      String(maxNames),
      String(windowMs + DAY_MS),
      ...names,
    )) as number[];
    const [gen, ...ids] = reply as [number, ...number[]];
    const entry = cached?.gen === gen ? cached : { gen, ids: new Map<string, number>() };
    names.forEach((name, index) => entry.ids.set(name, ids[index]!));
    idCache.set(base(stream, arch), entry);
    return { gen, ids };
  }

  /** Names by id of one generation, at least `length` of them (the dictionary only grows). */
  async function namesOf(stream: string, arch: Arch, gen: number, length: number): Promise<string[]> {
    const key = `${namesKey(stream, arch, gen)}:list`;
    const known = nameCache.get(key) ?? [];
    if (known.length < length) {
      known.push(...(await redis.lrange(key, known.length, -1)));
      nameCache.set(key, known);
    }
    return known;
  }

  return {
    async record({ stream, arch, runId, at = now(), tests }) {
      const cutoff = now().getTime() - windowMs;
      if (at.getTime() < cutoff) return false;
      const counted = tests.filter((test) => test.runs > 0);
      for (const test of counted) {
        if (
          !Number.isInteger(test.runs) ||
          !Number.isInteger(test.passes) ||
          test.passes < 0 ||
          test.passes > test.runs ||
          test.runs > MAX_COUNT
        ) {
          throw new RangeError(
            `history counts of ${test.name} must be whole, passes ≤ runs ≤ ${MAX_COUNT}: ${test.runs}/${test.passes}`,
          );
        }
      }
      const { gen, ids } = await intern(
        stream,
        arch,
        counted.map((test) => test.name),
      );
      const counts = new Uint16Array(ids.reduce((max, id) => Math.max(max, id + 1), 0) * 2);
      counted.forEach((test, index) => {
        const at = ids[index]! * 2;
        // A name given twice in one run adds up, as separate records of one test would.
        counts[at] = Math.min(MAX_COUNT, counts[at]! + test.runs);
        counts[at + 1] = Math.min(MAX_COUNT, counts[at + 1]! + test.passes);
      });
      const blob = encodeRunCounts({ gen, counts });
      const added = await scripts.historyRecordRun(
        `${base(stream, arch)}:runs`,
        `${base(stream, arch)}:run:${runId}`,
        namesKey(stream, arch, gen),
        `${namesKey(stream, arch, gen)}:list`,
        runId,
        String(at.getTime()),
        String(cutoff),
        String(windowMs + DAY_MS),
        String(maxRuns),
        blob,
        `${base(stream, arch)}:run:`,
      );
      return added === 1;
    },

    async read({ stream, arch }) {
      const cutoff = now().getTime() - windowMs;
      const pooled = await redis.zrangebyscore(`${base(stream, arch)}:runs`, cutoff, "+inf", "WITHSCORES");
      const runIds: string[] = [];
      const times: number[] = [];
      for (let i = 0; i < pooled.length; i += 2) {
        runIds.push(pooled[i]!);
        times.push(Number(pooled[i + 1]));
      }
      const runKeys = runIds.map((id) => `${base(stream, arch)}:run:${id}`);
      // A run's value never changes once written: fetch only the runs this process has not decoded yet.
      const missing = runKeys.filter((key) => !runCache.has(key));
      const fetched = missing.length > 0 ? await redis.mgetBuffer(...missing) : [];
      missing.forEach((key, index) => {
        const blob = fetched[index];
        // A run whose value expired a moment before its index entry is simply not pooled.
        if (blob && blob.length >= MINIMUM_ENCODED_BYTES) runCache.set(key, decodeRunCounts(blob));
      });
      const current = new Set(runKeys);
      for (const key of runCache.keys())
        if (key.startsWith(`${base(stream, arch)}:`) && !current.has(key)) runCache.delete(key);

      // Summed per generation and id in typed arrays; names are attached once at the end.
      const totals = new Map<number, { runs: Uint32Array; passes: Uint32Array }>();
      let runs = 0;
      let from: number | undefined;
      let to: number | undefined;
      for (const [index, key] of runKeys.entries()) {
        const run = runCache.get(key);
        if (!run) continue;
        runs++;
        from = Math.min(from ?? Infinity, times[index]!);
        to = Math.max(to ?? -Infinity, times[index]!);
        const size = run.counts.length / 2;
        let sums = totals.get(run.gen);
        if (!sums || sums.runs.length < size) {
          const grown = { runs: new Uint32Array(size), passes: new Uint32Array(size) };
          grown.runs.set(sums?.runs ?? []);
          grown.passes.set(sums?.passes ?? []);
          sums = grown;
          totals.set(run.gen, sums);
        }
        const { counts } = run;
        for (let id = 0; id < size; id++) {
          sums.runs[id]! += counts[id * 2]!;
          sums.passes[id]! += counts[id * 2 + 1]!;
        }
      }
      const byName = new Map<string, HistoryTestCounts>();
      for (const [gen, sums] of totals) {
        const names = await namesOf(stream, arch, gen, sums.runs.length);
        for (let id = 0; id < sums.runs.length; id++) {
          const name = names[id];
          // A dictionary expires with the last run that uses it; a run outliving it by a moment is skipped.
          if (sums.runs[id] === 0 || name === undefined) continue;
          const test = byName.get(name);
          if (test) {
            test.runs += sums.runs[id]!;
            test.passes += sums.passes[id]!;
          } else {
            byName.set(name, { name, runs: sums.runs[id]!, passes: sums.passes[id]! });
          }
        }
      }
      return {
        stream,
        arch,
        runs,
        ...(from !== undefined ? { from: new Date(from).toISOString() } : {}),
        ...(to !== undefined ? { to: new Date(to).toISOString() } : {}),
        tests: [...byName.values()],
      };
    },
  };
}
