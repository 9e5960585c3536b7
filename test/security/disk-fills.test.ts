import { randomBytes } from "node:crypto";
import { link, mkdir, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runnablePlan } from "../helpers/runnable-plan.ts";
import { resolvePlan } from "../../src/payload/resolve-plan.ts";
import { startDataDirSweeps } from "../../src/payload/start-data-dir-sweeps.ts";
import { sweepDataDir } from "../../src/payload/sweep-data-dir.ts";
import { pino } from "pino";
import { createContentCache } from "../../src/registry/content-cache.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { sha256Digest } from "../../src/registry/digest.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { diskUsage } from "../helpers/disk-usage.ts";

const KiB = 1024;
const DAY = 24 * 60 * 60_000;
let registry: RegistryServer;
const dirs: Array<{ remove(): Promise<void> }> = [];
const made = async (prefix: string) => {
  const dir = await tempDir(prefix);
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => d.remove()));
});

beforeAll(async () => {
  registry = await startRegistry();
});
afterAll(async () => {
  await registry.stop();
});

describe("the disk does not fill", () => {
  it("evicts blobs whose removal frees space, not those a fetched binary still links", async () => {
    const dir = await made("netstress-evict-");
    const cache = createContentCache({ dir: join(dir.path, "cache"), maxBytes: 250 * KiB });
    const blob = () => {
      const bytes = randomBytes(100 * KiB);
      return { bytes, digest: sha256Digest(bytes) };
    };
    const [linked, unlinked, fresh] = [blob(), blob(), blob()];
    cache.write(linked.digest, linked.bytes);
    cache.write(unlinked.digest, unlinked.bytes);
    await cache.settled();
    // A run's plan links the first one (as the local executor does); both were last used an hour ago.
    await mkdir(join(dir.path, "cache", "binaries", "b1"), { recursive: true });
    await link(cache.blobPath(linked.digest), join(dir.path, "cache", "binaries", "b1", "tests-ext.gz"));
    const hourAgo = new Date(Date.now() - 60 * 60_000);
    for (const { digest } of [linked, unlinked]) await utimes(cache.blobPath(digest), hourAgo, hourAgo);

    cache.write(fresh.digest, fresh.bytes);
    await cache.settled();
    expect(await cache.has(linked.digest)).toBe(true);
    expect(await cache.has(unlinked.digest)).toBe(false);
    expect(await cache.has(fresh.digest)).toBe(true);
    expect(await diskUsage(dir.path)).toBeLessThanOrEqual(250 * KiB);
  });

  it("removes old run data and unused binaries, never an active run's directory", async () => {
    const dir = await made("netstress-retention-");
    const put = async (path: string, bytes = 8 * KiB) => {
      await mkdir(join(dir.path, path, ".."), { recursive: true });
      await writeFile(join(dir.path, path), randomBytes(bytes));
    };
    for (const run of ["r-ended-long-ago", "r-active-long-ago"]) {
      await put(`runs/${run}/shards/s0/results.jsonl`);
      await put(`runs/${run}/report/index.html`);
    }
    await put("binaries/0123456789abcdef-ovn-kubernetes-tests-ext", 64 * KiB);
    await put("cache/binaries/aa/ovn-kubernetes-tests-ext.gz", 32 * KiB);
    await put("cache/tmp/half-a-download", 16 * KiB);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    // The sweep's clock is held where the recent files begin: however long a loaded machine takes
    // to write them and start the sweep, they stay younger than maxAgeMs and the others older.
    const recentFrom = Date.now();
    await put("runs/r-recent/report/index.html");
    await put("binaries/fedcba9876543210-sdn-tests-ext", 64 * KiB);
    const before = await diskUsage(dir.path);

    const asked: string[] = [];
    const report = await sweepDataDir({
      dataDir: dir.path,
      maxAgeMs: 1000,
      now: () => recentFrom + 900,
      isRunActive: async (runId) => {
        asked.push(runId);
        return runId === "r-active-long-ago";
      },
    });
    expect(report.removedRuns).toEqual(["r-ended-long-ago"]);
    expect(report.keptActiveRuns).toEqual(["r-active-long-ago"]);
    expect(asked.sort()).toEqual(["r-active-long-ago", "r-ended-long-ago"]);
    expect((await readdir(join(dir.path, "runs"))).sort()).toEqual(["r-active-long-ago", "r-recent"]);
    expect(await readdir(join(dir.path, "binaries"))).toEqual(["fedcba9876543210-sdn-tests-ext"]);
    expect(await readdir(join(dir.path, "cache", "binaries"))).toEqual([]);
    expect(await readdir(join(dir.path, "cache", "tmp"))).toEqual([]);
    expect(report.removedBinaries).toBe(2);
    expect(before - (await diskUsage(dir.path))).toBe(report.freedBytes);
    expect(report.freedBytes).toBeGreaterThanOrEqual((16 + 64 + 32 + 16) * KiB);
  });

  it("sweeps in the background on its own and says what it freed", async () => {
    const dir = await made("netstress-sweeps-");
    await mkdir(join(dir.path, "runs", "r-old"), { recursive: true });
    await writeFile(join(dir.path, "runs", "r-old", "summary.json"), "{}");
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const sweeps = startDataDirSweeps({
      dataDir: dir.path,
      maxAgeMs: 14 * DAY,
      isRunActive: async () => false,
      now: () => Date.now() + 15 * DAY,
      firstAfterMs: 0,
      logger,
    });
    await expect
      .poll(() => lines.find((l) => l.msg === "data directory swept"), { timeout: 5000 })
      .toMatchObject({
        removedRuns: 1,
        keptActiveRuns: 0,
      });
    await sweeps.stop();
    expect(await readdir(join(dir.path, "runs"))).toEqual([]);
  });

  it("frees a materialized binary's bytes once retention removed its link and the cache evicts it", async () => {
    const dir = await made("netstress-materialized-");
    const { payload } = await pushPayload({
      url: registry.url,
      host: registry.host,
      repository: "ocp/disk",
      name: "4.20.0-0.nightly",
      arches: ["amd64"],
      components: [{ tag: "ovn-kubernetes", binary: randomBytes(200 * KiB) }],
    });
    const cacheDir = join(dir.path, "cache");
    const images = await createRegistry({ cacheDir, cacheMaxBytes: 64 * KiB });
    const plan = await resolvePlan({ payload, arch: "amd64", registry: images });
    const executionPlan = await runnablePlan({ plan, cacheDir, registry: images });
    await images.settled();
    const binary = executionPlan.arms[0]!.components[0]!.binary;
    // The cache is over its size, but the binary a run is about to use stays: it is linked.
    expect((await stat(binary)).nlink).toBe(2);
    const withBinary = await diskUsage(dir.path);
    expect(withBinary).toBeGreaterThan(200 * KiB);

    // Fifteen days on, the run long over: its link goes, and then the next write evicts the blob.
    await mkdir(join(dir.path, "runs", "r1"), { recursive: true });
    const report = await sweepDataDir({
      dataDir: dir.path,
      maxAgeMs: 14 * DAY,
      isRunActive: async () => false,
      now: () => Date.now() + 15 * DAY,
    });
    expect(report).toMatchObject({ removedRuns: ["r1"], removedBinaries: 1 });
    const blobs = join(cacheDir, "blobs", "sha256");
    const longAgo = new Date(Date.now() - DAY);
    for (const name of await readdir(blobs)) await utimes(join(blobs, name), longAgo, longAgo);
    const cache = createContentCache({ dir: cacheDir, maxBytes: 64 * KiB });
    const bytes = randomBytes(KiB);
    cache.write(sha256Digest(bytes), bytes);
    await cache.settled();
    // The binary's 200 KiB are freed (less the block the write that triggered eviction took).
    expect(withBinary - (await diskUsage(dir.path))).toBeGreaterThanOrEqual(196 * KiB);
  });
});
