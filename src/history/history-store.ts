import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { PayloadCounts, TestCounts } from "../analysis/payload-counts.ts";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { redisKeys } from "../redis/redis-keys.ts";
import { redisScripts } from "../redis/redis-scripts.ts";
import {
  decodePayloadCounts,
  encodePayloadCounts,
  FIELDS,
  MINIMUM_ENCODED_BYTES,
  type EncodedCounts,
} from "./payload-counts-codec.ts";

/**
 * One test's counts from one run of the released payload: iterations run and iterations passed
 * cleanly; of the others, how many flaked (failed, then passed on a retry) and on how many clusters
 * it ran, when known.
 */
export interface HistoryTestCounts {
  name: string;
  runs: number;
  passes: number;
  flakes?: number;
  clusters?: number;
}

/** Which payload a pooled run ran. */
export interface PooledPayload {
  /** Pullspec by digest. */
  pullspec: string;
  /** The release-controller's name, when known. */
  release?: string;
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
   * Adds a run's per-test counts to its payload's entry in the history of its stream and arch (a
   * run whose payload is not known is an entry of its own). Idempotent per run id: a retried worker
   * adds nothing twice. False when the run was already pooled or is older than the window.
   */
  record(input: {
    stream: string;
    arch: Arch;
    runId: string;
    at?: Date;
    payload?: PooledPayload;
    tests: readonly HistoryTestCounts[];
  }): Promise<boolean>;
  /** The pooled counts of the window, summed over its payloads, in the form `netstress analyze --history` reads. */
  read(input: { stream: string; arch: Arch }): Promise<PooledHistory>;
  /** The window's payloads, oldest first, each with its own per-test counts. */
  readPayloadHistory(input: { stream: string; arch: Arch }): Promise<PayloadCounts[]>;
  /**
   * What identifies the state of readPayloadHistory's answer, read from the entries' heads alone
   * (no counts): equal while no run joined and no payload left the window. Undefined: no payload.
   */
  readPayloadFingerprint(input: { stream: string; arch: Arch }): Promise<string | undefined>;
}

export interface HistoryStoreOptions {
  redis: Redis;
  prefix: string;
  /** Payloads no run joined for this long leave the history. */
  windowDays?: number;
  /** At most this many runs per stream and arch; the oldest payloads leave first, whole. */
  maxRuns?: number;
  /** At most this many payloads per stream and arch; the oldest leave first. */
  maxPayloads?: number;
  /** A test-name dictionary that grows past this starts a new one (renamed tests do not pile up forever). */
  maxNames?: number;
  now?: () => Date;
}

const DAY_MS = 24 * 3600 * 1000;
/** Per test and run, iterations run and passed are at most this (a payload's sums may be larger). */
const MAX_COUNT = 0xffff;
/** Compare-and-set attempts of one record against writers of the same payload in other processes. */
const MAX_ATTEMPTS = 50;

/** A payload entry as this process last read it. */
interface Entry {
  version: string;
  runs: number;
  first: number;
  last: number;
  release: string;
  payload: string;
  counts?: EncodedCounts;
}

/**
 * The history of a release stream on one arch in Redis, per payload. Per stream and arch: a sorted
 * set of payload entries by the time their latest run was recorded; per entry a hash with the
 * per-test counts of every run of that payload merged into one small binary value (about a byte per
 * test, see payload-counts-codec.ts), the number of runs, and the run ids it holds (so a run joins
 * once); and a test-name dictionary (name → id, id → name) so names cross the wire and sit in
 * memory once. The pooled baseline PRs compare with is the sum of the entries. Bounded by age
 * (windowDays), runs (maxRuns) and payloads (maxPayloads); every key expires by itself once nothing
 * is recorded for the window. A run joins its entry by compare-and-set on the entry's version, so
 * concurrent runs of one payload in several processes all count. Each process keeps the entries it
 * has decoded, so a read fetches only entries that changed since its last read.
 */
export function createHistoryStore(options: HistoryStoreOptions): HistoryStore {
  const {
    redis,
    prefix,
    windowDays = 14,
    maxRuns = 500,
    maxPayloads = 500,
    maxNames = 50_000,
    now = () => new Date(),
  } = options;
  if (!Number.isInteger(windowDays) || windowDays < 1)
    throw new RangeError(`windowDays must be a positive integer, got ${windowDays}`);
  const windowMs = windowDays * DAY_MS;
  const keys = redisKeys(prefix);
  const base = keys.historyPool;
  const scripts = redisScripts(redis);
  const namesKey = (stream: string, arch: Arch, gen: number) => `${base(stream, arch)}:names:${gen}`;
  // Ids never change within a generation, so each process keeps what it has seen.
  const idCache = new Map<string, { gen: number; ids: Map<string, number> }>();
  const nameCache = new Map<string, string[]>();
  const entryCache = new Map<string, Entry>();

  /** One update per key at a time in this process: concurrent runs send new names once and rarely conflict. */
  const chains = new Map<string, Promise<unknown>>();
  async function serially<T>(key: string, action: () => Promise<T>): Promise<T> {
    const next = (chains.get(key) ?? Promise.resolve()).catch(() => undefined).then(action);
    chains.set(key, next);
    try {
      return await next;
    } finally {
      if (chains.get(key) === next) chains.delete(key);
    }
  }

  const intern = (stream: string, arch: Arch, names: readonly string[]) =>
    serially(`names:${base(stream, arch)}`, () => internNow(stream, arch, names));

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

  /** The counts of an entry by test name (an entry of an older dictionary generation is renamed this way). */
  async function byName(stream: string, arch: Arch, counts: EncodedCounts): Promise<Map<string, number[]>> {
    const size = counts.counts.length / FIELDS;
    const names = await namesOf(stream, arch, counts.gen, size);
    const tests = new Map<string, number[]>();
    for (let id = 0; id < size; id++) {
      const at = id * FIELDS;
      const name = names[id];
      if (counts.counts[at] === 0 || name === undefined) continue;
      tests.set(name, [...counts.counts.subarray(at, at + FIELDS)]);
    }
    return tests;
  }

  /** The entry's merged counts with one run's added, in the dictionary generation the run's names have. */
  async function merge(
    stream: string,
    arch: Arch,
    existing: EncodedCounts | undefined,
    run: readonly HistoryTestCounts[],
  ): Promise<EncodedCounts> {
    let names = run.map((test) => test.name);
    let interned = await intern(stream, arch, names);
    let previous: Map<string, number[]> | undefined;
    if (existing && existing.gen !== interned.gen) {
      // The entry was written in another generation: carry its tests over by name.
      previous = await byName(stream, arch, existing);
      names = [...new Set([...previous.keys(), ...names])];
      interned = await intern(stream, arch, names);
    }
    const ids = new Map(names.map((name, index) => [name, interned.ids[index]!]));
    const size = Math.max(
      interned.ids.reduce((max, id) => Math.max(max, id + 1), 0),
      existing && !previous ? existing.counts.length / FIELDS : 0,
    );
    const counts = new Uint32Array(size * FIELDS);
    if (existing && !previous) counts.set(existing.counts);
    for (const [name, values] of previous ?? []) counts.set(values, ids.get(name)! * FIELDS);
    const perRun = new Uint32Array(size * FIELDS);
    for (const test of run) {
      const at = ids.get(test.name)! * FIELDS;
      // A name given twice in one run adds up, as separate records of one test would.
      const runs = Math.min(MAX_COUNT, perRun[at]! + test.runs);
      const notPassed = Math.min(
        runs,
        perRun[at]! - perRun[at + 1]! - perRun[at + 2]! + test.runs - test.passes,
      );
      const flakes = Math.min(notPassed, perRun[at + 2]! + (test.flakes ?? 0));
      perRun[at] = runs;
      perRun[at + 1] = notPassed - flakes;
      perRun[at + 2] = flakes;
      perRun[at + 3] = Math.max(perRun[at + 3]!, test.clusters ?? 0);
    }
    for (let at = 0; at < perRun.length; at += FIELDS) {
      if (perRun[at] === 0) continue;
      for (let field = 0; field < FIELDS; field++) counts[at + field]! += perRun[at + field]!;
    }
    return { gen: interned.gen, counts };
  }

  function entryId(runId: string, payload: PooledPayload | undefined): string {
    return createHash("sha256")
      .update(payload ? `payload\0${payload.pullspec}` : `run\0${runId}`)
      .digest("hex")
      .slice(0, 32);
  }

  /** The entries of the window, by their latest run, with their counts decoded (fetching only what changed). */
  /** The window's entries, with their counts unless `headsOnly` (what identifies them, read cheaply). */
  async function entries(stream: string, arch: Arch, headsOnly = false): Promise<Entry[]> {
    const cutoff = now().getTime() - windowMs;
    const ids = await redis.zrangebyscore(keys.historyPayloads(stream, arch), cutoff, "+inf");
    const entryKeys = ids.map((id) => keys.historyPayload(stream, arch, id));
    const heads = entryKeys.length
      ? ((await entryKeys
          .reduce(
            (pipeline, key) => pipeline.hmget(key, "ver", "runs", "first", "last", "release", "payload"),
            redis.pipeline(),
          )
          .exec()) ?? [])
      : [];
    const stale: string[] = [];
    const current: Entry[] = [];
    const keyOf = new Map<Entry, string>();
    heads.forEach(([error, reply], index) => {
      const [version, runs, first, last, release, payload] = (reply ?? []) as (string | null)[];
      // An entry that expired a moment before its index entry is simply not pooled.
      if (error || !version) return;
      const key = entryKeys[index]!;
      const cached = entryCache.get(key);
      const entry: Entry =
        cached?.version === version
          ? cached
          : {
              version,
              runs: Number(runs),
              first: Number(first),
              last: Number(last),
              release: release ?? "",
              payload: payload ?? "",
            };
      if (!entry.counts) stale.push(key);
      keyOf.set(entry, key);
      current.push(entry);
    });
    if (headsOnly) return current;
    if (stale.length > 0) {
      const blobs =
        (await stale
          .reduce((pipeline, key) => pipeline.hgetBuffer(key, "counts"), redis.pipeline())
          .exec()) ?? [];
      const byKey = new Map(stale.map((key, index) => [key, blobs[index]?.[1] as Buffer | null | undefined]));
      for (const entry of current) {
        const blob = byKey.get(keyOf.get(entry)!);
        if (blob && blob.length >= MINIMUM_ENCODED_BYTES) entry.counts = decodePayloadCounts(blob);
      }
    }
    const live = new Set(entryKeys);
    for (const key of entryCache.keys())
      if (key.startsWith(`${base(stream, arch)}:`) && !live.has(key)) entryCache.delete(key);
    for (const entry of current) if (entry.counts) entryCache.set(keyOf.get(entry)!, entry);
    return current.filter((entry) => entry.counts);
  }

  return {
    async record({ stream, arch, runId, at = now(), payload, tests }) {
      const cutoff = now().getTime() - windowMs;
      if (at.getTime() < cutoff) return false;
      const counted = tests.filter((test) => test.runs > 0);
      for (const test of counted) {
        const flakes = test.flakes ?? 0;
        if (
          !Number.isInteger(test.runs) ||
          !Number.isInteger(test.passes) ||
          !Number.isInteger(flakes) ||
          test.passes < 0 ||
          flakes < 0 ||
          test.passes + flakes > test.runs ||
          test.runs > MAX_COUNT
        ) {
          throw new RangeError(
            `history counts of ${test.name} must be whole, passes ≤ runs ≤ ${MAX_COUNT} and passes + flakes ≤ runs: ${test.runs}/${test.passes}/${flakes}`,
          );
        }
      }
      const id = entryId(runId, payload);
      const entryKey = keys.historyPayload(stream, arch, id);
      return serially(entryKey, async () => {
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          const [versionBytes, claimed, blob] = await redis.hmgetBuffer(
            entryKey,
            "ver",
            `run:${runId}`,
            "counts",
          );
          if (claimed) return false;
          const version = versionBytes?.toString();
          const existing =
            version && blob && blob.length >= MINIMUM_ENCODED_BYTES ? decodePayloadCounts(blob) : undefined;
          const merged = await merge(stream, arch, existing, counted);
          const added = await scripts.historyRecordPayload(
            keys.historyPayloads(stream, arch),
            entryKey,
            namesKey(stream, arch, merged.gen),
            `${namesKey(stream, arch, merged.gen)}:list`,
            id,
            runId,
            String(at.getTime()),
            String(cutoff),
            String(windowMs + DAY_MS),
            String(maxRuns),
            String(maxPayloads),
            version ?? "",
            encodePayloadCounts(merged),
            payload?.release ?? payload?.pullspec ?? "",
            payload?.pullspec ?? "",
            keys.historyPayload(stream, arch, ""),
          );
          if (added !== -1) return added === 1;
        }
        throw new Error(
          `the history entry of ${stream} (${arch}) kept changing while run ${runId} joined it`,
        );
      });
    },

    async read({ stream, arch }) {
      const pooled = await entries(stream, arch);
      // Summed per generation and id in typed arrays; names are attached once at the end.
      const totals = new Map<number, Float64Array>();
      let runs = 0;
      let from: number | undefined;
      let to: number | undefined;
      for (const entry of pooled) {
        const { gen, counts } = entry.counts!;
        runs += entry.runs;
        from = Math.min(from ?? Infinity, entry.first);
        to = Math.max(to ?? -Infinity, entry.last);
        let sums = totals.get(gen);
        if (!sums || sums.length < counts.length) {
          const grown = new Float64Array(counts.length);
          grown.set(sums ?? []);
          sums = grown;
          totals.set(gen, sums);
        }
        for (let at = 0; at < counts.length; at++) sums[at]! += counts[at]!;
      }
      const tests = new Map<string, HistoryTestCounts>();
      for (const [gen, sums] of totals) {
        const names = await namesOf(stream, arch, gen, sums.length / FIELDS);
        for (let at = 0; at < sums.length; at += FIELDS) {
          const name = names[at / FIELDS];
          // A dictionary expires with the last entry that uses it; an entry outliving it by a moment is skipped.
          if (sums[at] === 0 || name === undefined) continue;
          const passes = sums[at]! - sums[at + 1]! - sums[at + 2]!;
          const test = tests.get(name);
          if (test) {
            test.runs += sums[at]!;
            test.passes += passes;
          } else {
            tests.set(name, { name, runs: sums[at]!, passes });
          }
        }
      }
      return {
        stream,
        arch,
        runs,
        ...(from !== undefined ? { from: new Date(from).toISOString() } : {}),
        ...(to !== undefined ? { to: new Date(to).toISOString() } : {}),
        tests: [...tests.values()],
      };
    },

    async readPayloadFingerprint({ stream, arch }) {
      const identities = (await entries(stream, arch, true))
        .filter((entry) => entry.payload)
        .sort((a, b) => a.first - b.first)
        .map((entry) => `${entry.payload}\0${entry.runs}\0${entry.version}`);
      if (identities.length === 0) return undefined;
      return createHash("sha256").update(identities.join("\0")).digest("hex");
    },

    async readPayloadHistory({ stream, arch }) {
      const history: PayloadCounts[] = [];
      const byFirstRun = (await entries(stream, arch)).sort((a, b) => a.first - b.first);
      for (const entry of byFirstRun) {
        // A run whose payload is not known is pooled but belongs to no payload's history.
        if (!entry.payload) continue;
        const tests: Record<string, TestCounts> = {};
        for (const [name, [executions, failures, flakes, clusters]] of await byName(
          stream,
          arch,
          entry.counts!,
        ))
          tests[name] = {
            executions: executions!,
            failures: failures!,
            flakes: flakes!,
            ...(clusters ? { clusters } : {}),
          };
        history.push({
          release: entry.release,
          payload: entry.payload,
          recordedAt: new Date(entry.first).toISOString(),
          runs: entry.runs,
          tests,
        });
      }
      return history;
    },
  };
}
