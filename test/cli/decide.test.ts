import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeRecord } from "../analysis/make-records.ts";
import { runNetstress } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
  await writeFile(join(dir.path, "tests.txt"), "test a\ntest b\n");
});
afterAll(() => dir.remove());

interface Output {
  design: string;
  tests: { name: string; decision: string }[];
  next: { tests: string[]; iterations: number; clusters: { pr: string[]; baseline: string[] } } | null;
}

const decide = (results: string[], payloads = "differ", extra: string[] = []) =>
  runNetstress([
    "decide",
    "--tests",
    join(dir.path, "tests.txt"),
    ...results.flatMap((path) => ["--results", path]),
    "--target",
    "0.02:0.32",
    "--payloads",
    payloads,
    "--cluster-cost",
    "100",
    "--upgrade-cost",
    "20",
    "--budget",
    "5000",
    "-o",
    "json",
    ...extra,
  ]);

/** Runs a batch as the caller would: every test, iteration and cluster the decision asked for. */
async function runBatch(name: string, next: NonNullable<Output["next"]>): Promise<string> {
  const batch = join(dir.path, name);
  await mkdir(batch);
  const records = (["pr", "baseline"] as const).flatMap((arm) =>
    next.clusters[arm].flatMap((cluster) =>
      next.tests.flatMap((test) =>
        Array.from({ length: next.iterations }, (_, iteration) =>
          makeRecord({ name: test, arm, cluster, iteration, result: "passed" }),
        ),
      ),
    ),
  );
  await writeFile(join(batch, "results.jsonl"), records.map((record) => JSON.stringify(record)).join("\n"));
  return batch;
}

describe("netstress decide", () => {
  it("with different payloads asks for baseline runs on new clusters, then the PR payload on the same clusters after their upgrade", async () => {
    const first = await decide([]);
    expect(first.stderr).toBe("");
    const start = JSON.parse(first.stdout) as Output;
    expect(start.design).toBe("crossover by upgrade");
    expect(start.next!.tests).toEqual(["test a", "test b"]);
    expect(start.next!.clusters.pr).toEqual([]);
    const baselineBatch = await runBatch("batch-1", start.next!);
    const second = JSON.parse((await decide([baselineBatch])).stdout) as Output;
    expect(second.next!.clusters.pr).toEqual(start.next!.clusters.baseline);
    for (const cluster of second.next!.clusters.baseline)
      expect(start.next!.clusters.baseline).not.toContain(cluster);
  });

  it("with --clusters-at-once starts no new clusters while those waiting for the PR payload fill the quota, and refuses fewer than 2", async () => {
    const quota = ["--clusters-at-once", "4"];
    const start = JSON.parse((await decide([], "differ", quota)).stdout) as Output;
    expect(start.next!.clusters.baseline).toHaveLength(4);
    const baselineBatch = await runBatch("quota-batch-1", start.next!);
    const second = JSON.parse((await decide([baselineBatch], "differ", quota)).stdout) as Output;
    expect(second.next!.clusters.pr).toEqual(start.next!.clusters.baseline);
    expect(second.next!.clusters.baseline).toEqual([]);
    const refused = await decide([], "differ", ["--clusters-at-once", "1"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--clusters-at-once");
  });

  it("refuses a batch that ran both arms on one cluster when the payloads differ", async () => {
    const batch = await runBatch("both-arms", {
      tests: ["test a"],
      iterations: 1,
      clusters: { pr: ["c1"], baseline: ["c1"] },
    });
    const result = await decide([batch]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("cluster c1 ran both arms in batch 1");
  });

  it("with --history starts new clusters on the PR payload alone, and names what is wrong in a history it cannot use", async () => {
    const history = join(dir.path, "history.json");
    const counts = { executions: 30, failures: 1, flakes: 1 };
    await writeFile(
      history,
      JSON.stringify({ payloads: [1, 2].map(() => ({ tests: { "test a": counts, "test b": counts } })) }),
    );
    const first = await decide([], "differ", ["--history", history]);
    expect(first.stderr).toBe("");
    const next = (JSON.parse(first.stdout) as Output).next!;
    expect(next.clusters.baseline).toEqual([]);
    expect(next.clusters.pr).toHaveLength(2);
    const same = await decide([], "same", ["--history", history]);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain("only when the payloads differ");
    await writeFile(
      history,
      JSON.stringify({ payloads: [{ tests: { "test a": { executions: 1, failures: 2, flakes: 0 } } }] }),
    );
    const wrong = await decide([], "differ", ["--history", history]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("failures and flakes exceed executions");
  });
});
