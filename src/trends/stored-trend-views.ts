import { extname } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Redis } from "ioredis";
import pLimit from "p-limit";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { PayloadCounts } from "../analysis/payload-counts.ts";
import { redisKeys } from "../redis/redis-keys.ts";
import type { buildTrendView, TrendView } from "../report/trend-view.ts";
import { changesAlong } from "./changes-along.ts";
import type { ChangesBetween } from "./payload-changes-cache.ts";

export type StoredTrendView =
  | { kind: "ready"; view: TrendView }
  | { kind: "computing" }
  /** No payload of the stream is in the history. */
  | { kind: "empty" };

type BuildInput = Omit<Parameters<typeof buildTrendView>[0], "firstBad">;

/** How long a stored view outlives its last computation (a stream nobody looks at is forgotten). */
const VIEW_TTL_SECONDS = 7 * 24 * 3600;

/**
 * The trend views the page serves, computed once per state of a stream's history (its
 * fingerprint: every payload and its run count) and stored in Redis, so every replica and every
 * later request reads the result. A request never computes: it gets the stored view of the
 * current history, or, while that is being computed, the stored view of an earlier one, or
 * "computing". One view is computed at a time, in a worker thread, so the first-bad-payload scan
 * (seconds of CPU on a large history) never holds the event loop.
 */
export function createStoredTrendViews(options: {
  history: {
    readPayloadHistory(input: { stream: string; arch: Arch }): Promise<PayloadCounts[]>;
    readPayloadFingerprint(input: { stream: string; arch: Arch }): Promise<string | undefined>;
  };
  changesBetween: ChangesBetween;
  redis: Redis;
  prefix: string;
  /** Builds a view off the event loop; default a worker thread. */
  build?: (input: BuildInput) => Promise<TrendView>;
  onError?: (error: unknown) => void;
}): (input: { stream: string; arch: Arch }) => Promise<StoredTrendView> {
  const keys = redisKeys(options.prefix);
  const build = options.build ?? buildInThread;
  const oneAtATime = pLimit(1);
  const computing = new Map<string, Promise<void>>();

  /** The newest view read or computed per stream and arch: most requests parse nothing. */
  const latest = new Map<string, { fingerprint: string; view: TrendView }>();

  const compute = async (stream: string, arch: Arch, fingerprint: string) => {
    const history = await options.history.readPayloadHistory({ stream, arch });
    const changes = await changesAlong(history, arch, options.changesBetween);
    const view = await build({ stream, arch, history, changes });
    latest.set(`${stream}\0${arch}`, { fingerprint, view });
    await options.redis.set(
      keys.trendView(stream, arch),
      JSON.stringify({ fingerprint, view }),
      "EX",
      VIEW_TTL_SECONDS,
    );
  };

  /** The stored view, parsed only when another replica stored a newer one than this one holds. */
  const stored = async (stream: string, arch: Arch, fingerprint: string) => {
    const held = latest.get(`${stream}\0${arch}`);
    if (held?.fingerprint === fingerprint) return held;
    const text = await options.redis.get(keys.trendView(stream, arch));
    const saved = text ? (JSON.parse(text) as { fingerprint: string; view: TrendView }) : undefined;
    if (saved?.fingerprint === fingerprint) latest.set(`${stream}\0${arch}`, saved);
    return saved ?? held;
  };

  return async ({ stream, arch }) => {
    const fingerprint = await options.history.readPayloadFingerprint({ stream, arch });
    if (fingerprint === undefined) return { kind: "empty" };
    const saved = await stored(stream, arch, fingerprint);
    if (saved?.fingerprint === fingerprint) return { kind: "ready", view: saved.view };
    const key = `${stream}\0${arch}\0${fingerprint}`;
    if (!computing.has(key)) {
      const done = oneAtATime(() => compute(stream, arch, fingerprint))
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => computing.delete(key));
      computing.set(key, done);
    }
    return saved ? { kind: "ready", view: saved.view } : { kind: "computing" };
  };
}

/** tsx's ESM entry (its package's `import` condition), as a URL a thread can import. */
function tsxLoader(): string {
  const api = createRequire(import.meta.url).resolve("tsx/esm/api");
  return pathToFileURL(api.replace(/\.cjs$/, ".mjs")).href;
}

/** One short-lived thread per view: views are rare (once per history change), threads cheap. */
function buildInThread(input: BuildInput): Promise<TrendView> {
  const extension = extname(fileURLToPath(import.meta.url));
  const body = new URL(`./trend-view-thread${extension}`, import.meta.url);
  // From the sources the thread registers tsx's loader before it loads its body (as
  // bin/netstress.js does); the compiled build runs plain JS.
  const worker =
    extension === ".ts"
      ? new Worker(
          `import(${JSON.stringify(tsxLoader())})` +
            `.then((tsx) => { tsx.register(); return import(${JSON.stringify(body.href)}); })`,
          { eval: true },
        )
      : new Worker(body);
  return new Promise<TrendView>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the trend view thread exited (${code})`)));
    worker.postMessage(input);
  }).finally(() => void worker.terminate());
}
