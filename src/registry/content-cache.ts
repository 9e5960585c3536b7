import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
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
  /** The blob's bytes if cached and intact; a corrupted file is dropped and reported as a miss. */
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
  const touch = (path: string) => {
    const now = new Date();
    return utimes(path, now, now).catch(() => {});
  };

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
      const bytes = await readFile(path).catch(() => undefined);
      if (bytes === undefined) return undefined;
      if (sha256Digest(bytes) !== digest) {
        await rm(path, { force: true });
        return undefined;
      }
      await touch(path);
      return bytes;
    },
    async write(digest, bytes) {
      await prepare();
      const temp = join(tmpDir, randomUUID());
      await writeFile(temp, bytes);
      await rename(temp, blobPath(digest));
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
      const text = await readFile(
        join(recordsDir, `${sha256Hex(sha256Digest(Buffer.from(key)))}.json`),
        "utf8",
      ).catch(() => undefined);
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return undefined;
      }
    },
    async writeRecord(key, value) {
      await prepare();
      const temp = join(tmpDir, randomUUID());
      await writeFile(temp, JSON.stringify(value));
      await rename(temp, join(recordsDir, `${sha256Hex(sha256Digest(Buffer.from(key)))}.json`));
    },
  };
}
