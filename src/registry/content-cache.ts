import { randomUUID } from "node:crypto";
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
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
  write(digest: string, bytes: Uint8Array): Promise<void>;
  /** A fresh path inside the cache to stream into; `adopt` moves it under its (verified) digest. */
  tempPath(): Promise<string>;
  adopt(tempPath: string, digest: string): Promise<string>;
  readRecord(key: string): Promise<unknown>;
  writeRecord(key: string, value: unknown): Promise<void>;
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "netstress");
}

export function createContentCache(options: { dir: string; maxBytes?: number }): ContentCache {
  const { dir } = options;
  const maxBytes = options.maxBytes ?? 4 * 1024 ** 3;
  const blobsDir = join(dir, "blobs", "sha256");
  const recordsDir = join(dir, "records");
  const tmpDir = join(dir, "tmp");
  let prepared: Promise<void> | undefined;
  let knownBytes: number | undefined;

  const prepare = () =>
    (prepared ??= Promise.all([blobsDir, recordsDir, tmpDir].map((d) => mkdir(d, { recursive: true }))).then(
      () => {},
    ));
  const blobPath = (digest: string) => join(blobsDir, sha256Hex(digest));
  /** Marks a blob as used for LRU eviction; bookkeeping only, so nobody waits for it. */
  const touch = (path: string) => {
    const now = new Date();
    void utimes(path, now, now).catch(() => {});
  };
  /**
   * Small cached files (manifests, configs, records) are read and written synchronously: a plan
   * touches a hundred of them, and a thread-pool round trip each costs more than the I/O itself.
   * Writes go through a temporary file and a rename, so that readers never see half a file.
   */
  const writeSmall = (path: string, bytes: Uint8Array | string) => {
    const temp = join(tmpDir, randomUUID());
    writeFileSync(temp, bytes);
    renameSync(temp, path);
  };
  const readSmall = (path: string): Buffer | undefined => {
    // A miss is the common case when cold: ask first rather than build an ENOENT error for each.
    if (!statSync(path, { throwIfNoEntry: false })) return undefined;
    try {
      return readFileSync(path);
    } catch {
      return undefined;
    }
  };
  const recordPath = (key: string) => join(recordsDir, `${sha256Hex(sha256Digest(Buffer.from(key)))}.json`);

  async function evictBeyondLimit(added: number): Promise<void> {
    if (knownBytes !== undefined) {
      knownBytes += added;
      if (knownBytes <= maxBytes) return;
    }
    const names = await readdir(blobsDir);
    const entries = (
      await Promise.all(
        names.map(async (name) => {
          const info = await stat(join(blobsDir, name)).catch(() => undefined);
          return info ? { path: join(blobsDir, name), size: info.size, used: info.mtimeMs } : undefined;
        }),
      )
    ).filter((e) => e !== undefined);
    let total = entries.reduce((sum, e) => sum + e.size, 0);
    // Evict down to 90% so that each write near the limit does not rescan the directory.
    if (total > maxBytes) {
      for (const entry of entries.sort((a, b) => a.used - b.used)) {
        if (total <= maxBytes * 0.9) break;
        await rm(entry.path, { force: true });
        total -= entry.size;
      }
    }
    knownBytes = total;
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
      const bytes = readSmall(path);
      if (bytes === undefined) return undefined;
      if (sha256Digest(bytes) !== digest) {
        await rm(path, { force: true });
        return undefined;
      }
      touch(path);
      return bytes;
    },
    async write(digest, bytes) {
      await prepare();
      writeSmall(blobPath(digest), bytes);
      await evictBeyondLimit(bytes.length);
    },
    async tempPath() {
      await prepare();
      return join(tmpDir, randomUUID());
    },
    async adopt(tempPath, digest) {
      await prepare();
      const target = blobPath(digest);
      const { size } = await stat(tempPath);
      await rename(tempPath, target);
      await evictBeyondLimit(size);
      return target;
    },
    async readRecord(key) {
      const bytes = readSmall(recordPath(key));
      if (bytes === undefined) return undefined;
      try {
        return JSON.parse(bytes.toString("utf8")) as unknown;
      } catch {
        return undefined;
      }
    },
    async writeRecord(key, value) {
      await prepare();
      writeSmall(recordPath(key), JSON.stringify(value));
    },
  };
}
