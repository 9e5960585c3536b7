import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { sha256Digest, sha256Hex } from "./digest.ts";

/**
 * A content-addressed store on disk: blobs are files named by their sha256, so that whatever is
 * pinned by digest is fetched once. Least recently used blobs are evicted beyond `maxBytes`.
 * Small JSON records (facts derived from immutable content, keyed by digests) live beside them.
 */
export interface ContentCache {
  readonly dir: string;
  blobPath(digest: string): string;
  has(digest: string): Promise<boolean>;
  /** A small blob's bytes if cached and intact; a corrupted file is dropped and reported as a miss. */
  read(digest: string): Promise<Buffer | undefined>;
  /** Stores a small blob; a failure to store is not an error (the cache is only an optimization). */
  write(digest: string, bytes: Uint8Array): void;
  /** A fresh path inside the cache to stream into; `adopt` moves it under its (verified) digest. */
  tempPath(): Promise<string>;
  adopt(tempPath: string, digest: string, size: number): Promise<string>;
  readRecord(key: string): Promise<unknown>;
  /** Stores a record, like `write`. */
  writeRecord(key: string, value: unknown): void;
  /** Resolves once the bookkeeping done in the background (use times, size accounting, eviction) is done. */
  settled(): Promise<void>;
}

/** How recent a blob's last recorded use may be for a new use to go unrecorded. */
const TOUCH_GRANULARITY_MS = 5 * 60_000;

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "netstress");
}

export function createContentCache(options: {
  dir: string;
  maxBytes?: number;
  /** A blob used this recently is not evicted: a caller may be about to read it (default 5 minutes). */
  keepRecentMs?: number;
}): ContentCache {
  const { dir, keepRecentMs = TOUCH_GRANULARITY_MS } = options;
  const maxBytes = options.maxBytes ?? 4 * 1024 ** 3;
  const blobsDir = join(dir, "blobs", "sha256");
  const recordsDir = join(dir, "records");
  const tmpDir = join(dir, "tmp");
  let prepared: Promise<void> | undefined;
  /** Bytes in blobs/: measured once, before this process first writes, then kept up to date. */
  let usedBytes = 0;
  let evicting: Promise<void> | undefined;

  const listBlobs = async () => {
    const names = await readdir(blobsDir);
    const entries = await Promise.all(
      names.map(async (name) => {
        const info = await stat(join(blobsDir, name)).catch(() => undefined);
        return info
          ? { path: join(blobsDir, name), size: info.size, used: info.mtimeMs, links: info.nlink }
          : undefined;
      }),
    );
    return entries.filter((e) => e !== undefined);
  };
  const prepare = () =>
    (prepared ??= (async () => {
      await Promise.all([blobsDir, recordsDir, tmpDir].map((d) => mkdir(d, { recursive: true })));
      usedBytes = (await listBlobs()).reduce((sum, e) => sum + e.size, 0);
    })());
  const blobPath = (digest: string) => join(blobsDir, sha256Hex(digest));
  const pending = new Set<Promise<void>>();
  const inBackground = (work: Promise<void>) => {
    const tracked: Promise<void> = work.catch(() => {}).finally(() => pending.delete(tracked));
    pending.add(tracked);
  };
  /**
   * Marks a blob as used for LRU eviction; bookkeeping only, so nobody waits for it. A blob used in
   * the last few minutes is left alone: eviction cannot tell minutes apart, and a warm plan reads a
   * thousand small blobs, whose use-time updates cost more than the reads.
   */
  const touch = (path: string, usedMs: number) => {
    const now = new Date();
    if (now.getTime() - usedMs < TOUCH_GRANULARITY_MS) return;
    inBackground(utimes(path, now, now));
  };
  let dirsMade = false;
  /**
   * Small files (manifests, configs, records) are written synchronously, straight to their final
   * name: a cold plan writes a hundred of them, and each promise-based write costs more than the
   * I/O itself. A torn file is harmless: blobs are verified and records validated when read.
   */
  const writeSmall = (path: string, bytes: Uint8Array | string, size: number) => {
    try {
      if (!dirsMade) {
        for (const d of [blobsDir, recordsDir, tmpDir]) mkdirSync(d, { recursive: true });
        dirsMade = true;
      }
      writeFileSync(path, bytes);
    } catch {
      return; // The cache is an optimization: a failed write only means fetching again later.
    }
    inBackground(prepare().then(() => evictBeyondLimit(size)));
  };
  /**
   * Small cached files (manifests, configs, records) are read synchronously: a warm plan reads a
   * hundred of them, and a thread-pool round trip each costs more than the read itself.
   */
  const readSmall = (path: string): { bytes: Buffer; usedMs: number } | undefined => {
    // A miss is the common case when cold: ask first rather than build an ENOENT error for each.
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) return undefined;
    try {
      return { bytes: readFileSync(path), usedMs: info.mtimeMs };
    } catch {
      return undefined;
    }
  };
  const recordPath = (key: string) => join(recordsDir, `${sha256Hex(sha256Digest(Buffer.from(key)))}.json`);

  /**
   * Drops the least recently used blobs, down to 90% of the limit so that the next write does not
   * rescan. A blob also linked elsewhere (a fetched binary) is kept: removing the cache's link
   * would free nothing. So is one used in the last minutes, which a caller may be about to read.
   */
  async function evictBeyondLimit(added: number): Promise<void> {
    usedBytes += added;
    if (usedBytes <= maxBytes || evicting) return evicting;
    evicting = (async () => {
      const entries = (await listBlobs()).sort((a, b) => a.used - b.used);
      let total = entries.reduce((sum, e) => sum + e.size, 0);
      const recent = Date.now() - keepRecentMs;
      for (const entry of entries) {
        if (total <= maxBytes * 0.9) break;
        if (entry.links > 1 || entry.used > recent) continue;
        await rm(entry.path, { force: true });
        total -= entry.size;
      }
      usedBytes = total;
    })().finally(() => (evicting = undefined));
    return evicting;
  }

  return {
    dir,
    blobPath,
    async has(digest) {
      return stat(blobPath(digest)).then(
        () => true,
        () => false,
      );
    },
    async read(digest) {
      const path = blobPath(digest);
      const small = readSmall(path);
      if (small === undefined) return undefined;
      // Torn or corrupted: a miss; the next write of this digest replaces the file.
      if (sha256Digest(small.bytes) !== digest) return undefined;
      touch(path, small.usedMs);
      return small.bytes;
    },
    write(digest, bytes) {
      writeSmall(blobPath(digest), bytes, bytes.length);
    },
    async tempPath() {
      await prepare();
      return join(tmpDir, randomUUID());
    },
    async adopt(tempPath, digest, size) {
      const target = blobPath(digest);
      await rename(tempPath, target);
      await evictBeyondLimit(size);
      return target;
    },
    async readRecord(key) {
      const small = readSmall(recordPath(key));
      if (small === undefined) return undefined;
      try {
        return JSON.parse(small.bytes.toString("utf8")) as unknown;
      } catch {
        return undefined;
      }
    },
    writeRecord(key, value) {
      const text = JSON.stringify(value);
      writeSmall(recordPath(key), text, 0);
    },
    async settled() {
      while (pending.size > 0) await Promise.all(pending);
    },
  };
}
