import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSampleBinaries,
  type SampleBinaries,
} from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { createLocalExecutor } from "../../src/farm/local-executor.ts";
import type { Shard } from "../../src/runs/shard-executor.ts";
import type { RunProgress } from "../../src/runner/run-plan.ts";
import { localImages } from "../helpers/local-images.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: Awaited<ReturnType<typeof tempDir>>;
let binaries: SampleBinaries;
const arch = hostArch();
const env = { ...process.env, SAMPLE_EXT_SEED: "local-executor", SAMPLE_EXT_TIME_SCALE: "0" };

beforeAll(async () => {
  dir = await tempDir();
  binaries = await buildSampleBinaries({ outDir: join(dir.path, "bin") });
});
afterAll(async () => dir.remove());

function shard(overrides: Partial<Shard> = {}): Shard {
  return {
    runId: "r1",
    id: `${arch}-3-4`,
    arch,
    arms: ["pr", "baseline"],
    iterations: { first: 3, count: 2 },
    plan: {
      arch,
      arms: [
        { arm: "pr", components: [{ component: "sdn", binary: binaries.released.sdn, source: "released" }] },
        {
          arm: "baseline",
          components: [{ component: "sdn", binary: binaries.released.sdn, source: "released" }],
        },
      ],
    },
    seed: "s",
    focus: "host subnet",
    parallel: 2,
    testTimeoutMs: 30_000,
    retries: 0,
    ...overrides,
  };
}

/** The executor under test: this machine's arch, the sample binaries' cache and images. */
async function localExecutor() {
  return createLocalExecutor({
    arches: [arch],
    cacheDir: join(dir.path, "cache"),
    images: await localImages(join(dir.path, "images")),
    env,
  });
}

describe("the local executor", () => {
  it("runs a shard's iterations of both arms on this machine, reporting progress", async () => {
    const executor = await localExecutor();
    expect(await executor.arches()).toEqual([arch]);
    const progress: RunProgress[] = [];
    const outcome = await executor.execute({
      shard: shard(),
      outDir: join(dir.path, "shard-ok"),
      signal: new AbortController().signal,
      onProgress: (p) => progress.push(p),
    });
    expect(outcome).toMatchObject({ status: "completed", records: 4 });
    const records = (await readFile(join(dir.path, "shard-ok", "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { arm: string; iteration: number });
    expect(records.map((r) => `${r.arm}:${r.iteration}`).sort()).toEqual([
      "baseline:3",
      "baseline:4",
      "pr:3",
      "pr:4",
    ]);
    expect(progress.at(-1)).toMatchObject({ done: 4, total: 4 });
  });

  it("writes results.jsonl whole when two executions of one shard share its directory", async () => {
    const executor = await localExecutor();
    const outDir = join(dir.path, "shard-twice");
    // Two executions at once: a stalled job resumed on this worker while its first execution lives.
    const [first, second] = await Promise.all(
      [1, 2].map(() =>
        executor.execute({
          shard: shard({ iterations: { first: 3, count: 6 } }),
          outDir,
          signal: new AbortController().signal,
        }),
      ),
    );
    for (const outcome of [first!, second!]) {
      expect(outcome).toMatchObject({ status: "completed", records: 12 });
      if (outcome.status !== "completed") continue;
      // One execution's records, whole: each iteration of each arm once.
      const records = (await readFile(outcome.resultsPath, "utf8"))
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { arm: string; iteration: number });
      expect(records.map((r) => `${r.arm}:${r.iteration}`).sort()).toEqual(
        ["baseline", "pr"].flatMap((arm) => [3, 4, 5, 6, 7, 8].map((i) => `${arm}:${i}`)),
      );
    }
    expect(await readdir(outDir).then((names) => names.filter((n) => n.startsWith("results")))).toEqual([
      "results.jsonl",
    ]);
  });

  it("stops when aborted and says so", async () => {
    const executor = await localExecutor();
    const controller = new AbortController();
    controller.abort("superseded");
    const outcome = await executor.execute({
      shard: shard(),
      outDir: join(dir.path, "shard-abort"),
      signal: controller.signal,
    });
    expect(outcome).toMatchObject({ status: "cancelled", records: 0 });
  });

  it("reports a shard it cannot run as failed, with the reason", async () => {
    const executor = await localExecutor();
    const broken = shard({
      plan: {
        arch,
        arms: [
          { arm: "pr", components: [{ component: "sdn", binary: join(dir.path, "missing-tests-ext") }] },
        ],
      },
      arms: ["pr"],
    });
    const outcome = await executor.execute({
      shard: broken,
      outDir: join(dir.path, "shard-bad"),
      signal: new AbortController().signal,
    });
    expect(outcome.status).toBe("failed");
    expect(outcome.status === "failed" && outcome.reason).toContain("missing-tests-ext");
  });
});
