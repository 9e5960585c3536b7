import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import { createHistoryStore, type HistoryStore } from "../../src/history/history-store.ts";
import type { RunRecord } from "../../src/runs/run-record.ts";
import { analyzeRun } from "../../src/report/analyze-run.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { armRecords } from "../analysis/make-records.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const FLAKY = "[sig-network] pods reach pods across nodes";
const STABLE = "[sig-network] services answer on their cluster IP";

let redis: Redis;
let history: HistoryStore;
let dir: string;
let removeDir: () => Promise<void>;

beforeAll(async () => {
  redis = new Redis(inject("redisUrl"));
  history = createHistoryStore({ redis, prefix: `test-history-analysis-${process.pid}-${Date.now()}` });
  ({ path: dir, remove: removeDir } = await tempDir("netstress-history-analysis-"));
});
afterAll(async () => {
  await redis.quit();
  await removeDir();
});

const historyRun = (options: {
  baseline: RunRecord["options"]["baseline"];
  releaseStream?: string;
}): RunRecord => {
  const { source } = runRecord();
  return runRecord({
    options: { iterations: 10, baseline: options.baseline },
    source: { ...source, ...(options.releaseStream ? { releaseStream: options.releaseStream } : {}) },
    state: "analyzing",
  });
};

async function resultsFile(name: string, records: ResultRecord[]): Promise<string> {
  const path = join(dir, `${name}.jsonl`);
  await writeFile(path, records.map((record) => JSON.stringify(record)).join("\n") + "\n");
  return path;
}

/** Pools `runs` runs of 10 iterations in which FLAKY failed once and STABLE never. */
async function fillPool(stream: string, runs: number): Promise<void> {
  for (let run = 0; run < runs; run++) {
    await history.record({
      stream,
      arch: "amd64",
      runId: `pooled-${run}`,
      tests: [
        { name: FLAKY, runs: 10, passes: 9 },
        { name: STABLE, runs: 10, passes: 10 },
      ],
    });
  }
}

const prArm = (flakyFailures: number) => [
  ...armRecords({ name: FLAKY, arm: "pr", runs: 10, failed: flakyFailures }),
  ...armRecords({ name: STABLE, arm: "pr", runs: 10 }),
];

describe("baseline=history", () => {
  it("uses the pool's size: a larger pool detects smaller failure rates, a tiny one is inconclusive", async () => {
    const analyze = createRunAnalyzer({ history, log: pino({ level: "silent" }) });
    const pr = await resultsFile("pr-clean", prArm(0));
    const detectable: Record<string, number | null> = {};
    for (const [stream, runs] of [
      ["pool-of-300", 300],
      ["pool-of-1", 1],
    ] as const) {
      await fillPool(stream, runs);
      const outDir = join(dir, stream);
      const run = historyRun({ baseline: "history", releaseStream: stream });
      const result = await analyze({ run, resultsPaths: [pr], outDir });
      const summary = JSON.parse(await readFile(join(outDir, "summary.json"), "utf8"));
      const stable = summary.tests.find((t: { name: string }) => t.name === STABLE);
      expect(stable.baseline.runs).toBe(runs * 10);
      expect(summary.baselineKind).toBe("history");
      detectable[stream] = stable.minDetectableFailureRate;
      expect(result.output.summary + (result.output.text ?? "")).toContain("pooled history");
      // The report says how large and how old the pool was.
      expect(await readFile(result.reportPath, "utf8")).toMatch(
        new RegExp(`pooled from ${runs} run\\(s\\) from \\d{4}-\\d\\d-\\d\\dT`),
      );
      // The pool reaches the analysis as read from the store, not through a file beside the report.
      expect(await readFile(result.reportPath, "utf8")).toContain(
        `history baseline of stream ${stream} (amd64)`,
      );
      expect(existsSync(join(outDir, "history.json"))).toBe(false);
    }
    expect(detectable["pool-of-300"]).not.toBeNull();
    expect(detectable["pool-of-1"]).not.toBeNull();
    expect(detectable["pool-of-300"]!).toBeLessThan(detectable["pool-of-1"]!);

    // Four pooled iterations are too few to judge anything against.
    await history.record({
      stream: "pool-of-4-iterations",
      arch: "amd64",
      runId: "only",
      tests: [{ name: STABLE, runs: 4, passes: 4 }],
    });
    const outDir = join(dir, "tiny");
    await createRunAnalyzer({ history, log: pino({ level: "silent" }) })({
      run: historyRun({ baseline: "history", releaseStream: "pool-of-4-iterations" }),
      resultsPaths: [await resultsFile("stable-only", armRecords({ name: STABLE, arm: "pr", runs: 10 }))],
      outDir,
    });
    const tiny = JSON.parse(await readFile(join(outDir, "summary.json"), "utf8"));
    expect(tiny.tests[0]).toMatchObject({ class: "inconclusive", baseline: { runs: 4 } });
  });

  it("flags a regression against a large pool that a side-by-side arm of ten would miss", async () => {
    await fillPool("regression-pool", 300);
    const pr = await resultsFile("pr-worse", prArm(5));
    const result = await createRunAnalyzer({ history, log: pino({ level: "silent" }) })({
      run: historyRun({ baseline: "history", releaseStream: "regression-pool" }),
      resultsPaths: [pr],
      outDir: join(dir, "regression"),
    });
    expect(result.conclusion).toBe("failure");
    // The same PR arm against a clean side-by-side arm of 10 iterations: not enough evidence.
    const sideBySide = await analyzeRun({
      pr: await resultsFile("pr-worse-with-arm", [
        ...prArm(4),
        ...armRecords({ name: FLAKY, arm: "baseline", runs: 10, failed: 1 }),
        ...armRecords({ name: STABLE, arm: "baseline", runs: 10 }),
      ]),
      outDir: join(dir, "side-by-side"),
    });
    expect(sideBySide.conclusion).not.toBe("failure");
  });

  it("ends neutral, comparing nothing, while the stream's pool is empty", async () => {
    const result = await createRunAnalyzer({ history, log: pino({ level: "silent" }) })({
      run: historyRun({ baseline: "history", releaseStream: "never-pooled" }),
      resultsPaths: [await resultsFile("pr-any", prArm(3))],
      outDir: join(dir, "empty"),
    });
    expect(result.conclusion).toBe("neutral");
    expect(result.output.title).toBe("No history for never-pooled (amd64) yet — nothing compared");
  });
});

describe("baseline=payload runs", () => {
  const isolated = (run: RunRecord, armsIsolated: boolean): RunRecord => ({
    ...run,
    results: [{ id: "amd64-0-9", resultsPath: "unused", first: 0, count: 10, armsIsolated }],
  });

  it("add their baseline arm, never their PR arm, to the stream's pool, once per run, when the arms ran isolated", async () => {
    const analyze = createRunAnalyzer({ history, log: pino({ level: "silent" }) });
    const run = isolated(historyRun({ baseline: "payload", releaseStream: "fed-by-prs" }), true);
    const both = await resultsFile("both-arms", [
      ...prArm(5),
      ...armRecords({ name: FLAKY, arm: "baseline", runs: 10, failed: 1 }),
      ...armRecords({ name: STABLE, arm: "baseline", runs: 10, flaked: 2 }),
    ]);
    await analyze({ run, resultsPaths: [both], outDir: join(dir, "fed-1") });
    await analyze({ run, resultsPaths: [both], outDir: join(dir, "fed-2") });
    const pool = await history.read({ stream: "fed-by-prs", arch: "amd64" });
    expect(pool.runs).toBe(1);
    expect(new Map(pool.tests.map((t) => [t.name, [t.runs, t.passes]]))).toEqual(
      new Map([
        [FLAKY, [10, 9]],
        // A flaked iteration is not a clean pass.
        [STABLE, [10, 8]],
      ]),
    );
    // A run without a release stream has no pool to feed.
    await analyze({
      run: isolated(historyRun({ baseline: "payload" }), true),
      resultsPaths: [both],
      outDir: join(dir, "no-stream"),
    });
    expect((await history.read({ stream: "fed-by-prs", arch: "amd64" })).runs).toBe(1);
  });

  it("add nothing to the pool when the PR's binaries shared a pod or a machine with the baseline's", async () => {
    const analyze = createRunAnalyzer({ history, log: pino({ level: "silent" }) });
    // The PR's binary wrote the baseline's results: the test failing on the released payload.
    const planted = await resultsFile("planted", [
      ...prArm(5),
      ...armRecords({ name: FLAKY, arm: "baseline", runs: 10, failed: 10 }),
    ]);
    for (const run of [
      isolated(historyRun({ baseline: "payload", releaseStream: "shared-pod" }), false),
      historyRun({ baseline: "payload", releaseStream: "shared-pod" }),
    ])
      await analyze({ run, resultsPaths: [planted], outDir: join(dir, `planted-${run.id}`) });
    expect((await history.read({ stream: "shared-pod", arch: "amd64" })).runs).toBe(0);
  });
});
