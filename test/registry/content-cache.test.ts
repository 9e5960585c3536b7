import { mkdtemp, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createContentCache } from "../../src/registry/content-cache.ts";
import { sha256Digest } from "../../src/registry/digest.ts";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-cache-"));
});
afterAll(() => rm(work, { recursive: true, force: true }));

const blob = (n: number, size = 1000) => Buffer.alloc(size, n);

describe("content cache", () => {
  it("keeps within its size by evicting the least recently used blobs", async () => {
    const dir = await mkdtemp(join(work, "c-"));
    const cache = createContentCache({ dir, maxBytes: 3500 });
    const digests = [0, 1, 2].map((n) => sha256Digest(blob(n)));
    for (const [n, digest] of digests.entries()) {
      cache.write(digest, blob(n));
      // Distinct use times, oldest first, without waiting for the clock.
      await cache.settled();
      await utimes(cache.blobPath(digest), 1000 + n, 1000 + n);
    }
    expect(await cache.read(digests[0]!)).toEqual(blob(0)); // used now: the newest
    await cache.settled();
    cache.write(sha256Digest(blob(3)), blob(3));
    await cache.settled();
    expect(await cache.has(digests[1]!)).toBe(false);
    expect(await cache.has(digests[0]!)).toBe(true);
    expect(await cache.has(sha256Digest(blob(3)))).toBe(true);
  });

  it("records a use only when the last recorded one is minutes old, so warm reads cost no writes", async () => {
    const dir = await mkdtemp(join(work, "c-"));
    const cache = createContentCache({ dir });
    const digest = sha256Digest(blob(5));
    cache.write(digest, blob(5));
    await cache.settled();
    const minuteAgo = (Date.now() - 60_000) / 1000;
    await utimes(cache.blobPath(digest), minuteAgo, minuteAgo);
    expect(await cache.read(digest)).toEqual(blob(5));
    await cache.settled();
    expect((await stat(cache.blobPath(digest))).mtimeMs).toBeCloseTo(minuteAgo * 1000, -1);
  });

  it("treats a corrupted blob as a miss and a broken record as absent", async () => {
    const dir = await mkdtemp(join(work, "c-"));
    const cache = createContentCache({ dir });
    const digest = sha256Digest(blob(7));
    cache.write(digest, blob(7));
    cache.writeRecord("facts", { found: true });
    await writeFile(cache.blobPath(digest), "bit rot");
    expect(await cache.read(digest)).toBeUndefined();
    expect(await cache.readRecord("facts")).toEqual({ found: true });
    expect(await cache.readRecord("never written")).toBeUndefined();
  });
});
