import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { processExecute } from "../../src/queue/process-execute.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import type { ShardExecutor } from "../../src/runs/shard-executor.ts";
import { eventually } from "../helpers/github-api.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const TEST = "[sig-network] pods reach pods";

let env: Awaited<ReturnType<typeof testRunDeps>>;
let dir: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  env = await testRunDeps();
  dir = await tempDir();
});
afterEach(async () => {
  await env.close();
  await dir.remove();
});

/** Writes every iteration of the shard with `result`, after `before` lets it. */
function writingExecutor(
  result: ResultRecord["result"],
  written: string[],
  before: () => Promise<void> = async () => {},
): ShardExecutor {
  return {
    name: "writing",
    arches: async () => ["amd64"],
    async execute({ shard, outDir }) {
      await before();
      const records = shard.arms.flatMap((arm) =>
        Array.from({ length: shard.iterations.count }, (_, i) => ({
          name: TEST,
          lifecycle: "blocking" as const,
          duration: 1,
          result,
          output: "",
          arm,
          arch: shard.arch,
          iteration: shard.iterations.first + i,
          attempt: 0,
        })),
      );
      await mkdir(outDir, { recursive: true });
      const resultsPath = join(outDir, "results.jsonl");
      await writeFile(resultsPath, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
      written.push(resultsPath);
      return { status: "completed", resultsPath, records: records.length };
    },
  };
}

describe("two workers executing one shard at once", () => {
  it("keep the winner's results as they were recorded, whatever the loser writes after, and remove the loser's copy", async () => {
    const record = runRecord({
      plan: {
        arch: "amd64",
        arms: (["pr", "baseline"] as const).map((arm) => ({
          arm,
          components: [{ component: "ovn-kubernetes", binary: "/bin/true" }],
        })),
      },
      options: { iterations: 4, baseline: "payload" },
    });
    await env.deps.store.create(record);
    const analyzed: string[] = [];
    const analyze: AnalyzeRunResults = async ({ resultsPaths }) => {
      for (const path of resultsPaths) analyzed.push(await readFile(path, "utf8"));
      return {
        conclusion: "success",
        output: { title: "analyzed", summary: "" },
        reportPath: "/report.html",
      };
    };
    const written: string[] = [];
    const stage = (executor: ShardExecutor) =>
      processExecute(env.deps, { executor, analyze, dataDir: dir.path }, record.id);
    // The first worker's results are recorded; a stalled job resumed elsewhere finishes the same
    // shard afterwards, with other results.
    const winner = stage(writingExecutor("passed", written));
    const loser = stage(
      writingExecutor("failed", written, () =>
        eventually(async () => (await env.deps.store.get(record.id))!.results.length === 1).then(() => {}),
      ),
    );
    expect(await Promise.all([winner, loser])).toEqual(["done", "done"]);

    const run = (await env.deps.store.get(record.id))!;
    expect(run).toMatchObject({ state: "completed", conclusion: "success" });
    expect(run.results).toHaveLength(1);
    const kept = await readFile(run.results[0]!.resultsPath, "utf8");
    expect(kept).not.toContain('"result":"failed"');
    for (const content of analyzed) expect(content).toBe(kept);
    // The loser's copy of its results is removed: only the kept one is left beside the shared file.
    const shardDir = dirname(run.results[0]!.resultsPath);
    expect((await readdir(shardDir)).filter((name) => /^results-.*\.jsonl$/.test(name))).toEqual([
      basename(run.results[0]!.resultsPath),
    ]);
    expect(written).toHaveLength(2);
  });
});
