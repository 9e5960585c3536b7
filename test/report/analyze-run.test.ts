import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnalysisInputError } from "../../src/report/analysis-input-error.ts";
import { analyzeRun } from "../../src/report/analyze-run.ts";
import { CHECK_RUN_LIMITS } from "../../src/report/check-run-output.ts";
import { analysisSummarySchema } from "../../src/report/summary-json.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { RunManifest } from "../../src/runner/run-manifest.ts";
import { armRecords, clusteredRecords, makeRecord } from "../analysis/make-records.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "netstress-analyze-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const REGRESSED = "[sig-network] pods should reach a service on another node";
const FLAKY = "[sig-network] DNS should resolve the cluster service";

/** A side-by-side run as the runner writes it: both arms in one results.jsonl, plus run.json. */
function sideBySide(): ResultRecord[] {
  return [
    ...armRecords({ name: REGRESSED, arm: "pr", runs: 10, failed: 5, flaked: 2 }),
    ...armRecords({ name: REGRESSED, arm: "baseline", runs: 10 }),
    ...armRecords({ name: FLAKY, arm: "pr", runs: 10, flaked: 2, component: "sdn" }),
    ...armRecords({ name: FLAKY, arm: "baseline", runs: 10, flaked: 2, component: "sdn" }),
    ...Array.from({ length: 20 }, (_, index) => [
      ...armRecords({ name: `[sig-network] stable ${index}`, arm: "pr", runs: 10 }),
      ...armRecords({ name: `[sig-network] stable ${index}`, arm: "baseline", runs: 10 }),
    ]).flat(),
  ];
}

const manifest: RunManifest = {
  status: "completed",
  arch: "amd64",
  seed: "abc123",
  iterations: 10,
  firstIteration: 0,
  parallel: 4,
  retries: 1,
  timeoutMs: 900_000,
  startedAt: "2024-06-11T10:00:00Z",
  finishedAt: "2024-06-11T11:00:00Z",
  components: [
    {
      arm: "pr",
      component: "ovn-kubernetes",
      binary: "/tmp/ovn-kubernetes-tests-ext",
      sha256: "aa".repeat(32),
      source: "override",
      image: "registry.ci.example/pr-123/ovn-kubernetes@sha256:1111",
      commit: "deadbeef",
      tests: 22,
    },
    {
      arm: "baseline",
      component: "ovn-kubernetes",
      binary: "/tmp/released-ovn-kubernetes-tests-ext",
      sha256: "bb".repeat(32),
      source: "released",
      tests: 22,
    },
  ],
};

async function writeRun(
  name: string,
  records: ResultRecord[],
  extraLines: string[] = [],
  withManifest = true,
): Promise<string> {
  const runDir = join(dir, name);
  await mkdir(runDir, { recursive: true });
  await writeFile(
    join(runDir, "results.jsonl"),
    [...records.map((r) => JSON.stringify(r)), ...extraLines].join("\n") + "\n",
  );
  if (withManifest) await writeFile(join(runDir, "run.json"), JSON.stringify(manifest));
  return runDir;
}

describe("analyzeRun", () => {
  it("finds the sample PR's regression in a real demo run, and blames nothing else", async () => {
    const fixture = new URL("../fixtures/analysis-demo-run/", import.meta.url).pathname;
    const result = await analyzeRun({ pr: fixture, outDir: join(dir, "demo-report") });
    const blamed = result.analysis.tests.filter((t) => t.class === "regression" || t.class === "new-flake");
    expect(blamed.map((t) => t.name)).toEqual([
      expect.stringContaining("NodePort service should be reachable"),
    ]);
    expect(result.analysis.tests.find((t) => t.class === "new-test")?.name).toMatch(/EgressService/);
    expect(result.conclusion).toBe("failure");
    expect(result.title).toMatch(/^1 regression, 1 flaky new test — 13 tests × 10 runs, /);
    const html = await readFile(result.paths.html, "utf8");
    expect(html).toContain("ovn-kubernetes-tests-ext.gz");
    expect(html).toMatch(/[0-9a-f]{7,} \(from info\)/);
  });

  it("analyzes one results.jsonl holding both arms and writes every report", async () => {
    const runDir = await writeRun("both-arms", sideBySide());
    const result = await analyzeRun({ pr: join(runDir, "results.jsonl"), outDir: join(runDir, "report") });

    expect(result.conclusion).toBe("failure");
    expect(result.title).toBe("1 regression — 22 tests × 10 runs, amd64");
    const summary = analysisSummarySchema.parse(JSON.parse(await readFile(result.paths.summaryJson, "utf8")));
    expect(summary).toMatchObject({ conclusion: "failure", arch: "amd64", iterations: 10 });
    const byName = new Map(summary.tests.map((test) => [test.name, test]));
    expect(byName.get(REGRESSED)).toMatchObject({
      class: "regression",
      pr: { runs: 10, passes: 3, failures: 5, flakes: 2 },
      baseline: { runs: 10, passes: 10, failures: 0, flakes: 0 },
      minDetectableFailureRate: null,
    });
    expect(byName.get(FLAKY)?.class).toBe("known-flake");
    expect(summary.tests.filter((test) => test.class === "stable")).toHaveLength(20);

    const checkRun = JSON.parse(await readFile(result.paths.checkRun, "utf8"));
    expect(checkRun.conclusion).toBe("failure");
    expect(checkRun.output.summary.indexOf("pods should reach")).toBeLessThan(
      checkRun.output.summary.indexOf("DNS should"),
    );

    const junit = await readFile(result.paths.junit, "utf8");
    expect(junit.match(/<testcase /g)).toHaveLength(44);
    expect(junit.match(/<failure /g)).toHaveLength(1);
    expect(junit).toMatch(/FLAKY in 2 of 10 iteration\(s\)/);

    const html = await readFile(result.paths.html, "utf8");
    expect(html).toContain("registry.ci.example/pr-123/ovn-kubernetes@sha256:1111");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
  });

  it("takes the baseline from separate files, even when that run labelled its records pr", async () => {
    const records = sideBySide();
    const prDir = await writeRun(
      "separate/pr",
      records.filter((r) => r.arm === "pr"),
    );
    const baselineDir = await writeRun(
      "separate/baseline",
      records.filter((r) => r.arm === "baseline").map((r) => ({ ...r, arm: "pr" as const })),
    );
    const result = await analyzeRun({ pr: prDir, baseline: baselineDir, outDir: join(dir, "separate/out") });
    expect(result.analysis.tests.find((t) => t.name === REGRESSED)?.class).toBe("regression");
    expect(result.analysis.counts.stable).toBe(20);
  });

  it("counts malformed lines and duplicate records, reports them, and still concludes", async () => {
    const records = sideBySide();
    const runDir = await writeRun(
      "bad-lines",
      [...records, records[0]!, records[1]!],
      ["this is not json", '{"name":"half a record"}', "{"],
    );
    const result = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    expect(result.conclusion).toBe("failure");
    const summary = JSON.parse(await readFile(result.paths.summaryJson, "utf8"));
    expect(summary.notes.join("\n")).toMatch(
      /3 malformed line\(s\) skipped \(first: .*results\.jsonl:\d+: not JSON/,
    );
    expect(summary.notes.join("\n")).toMatch(/2 duplicate record\(s\) ignored/);
    expect(result.checkRun.summary).toMatch(/3 malformed line/);
    expect(summary.tests.find((t: { name: string }) => t.name === REGRESSED).pr.runs).toBe(10);
  });

  it("shows the notes it is given (iterations the executor lost) in every report, first", async () => {
    const runDir = await writeRun("lost-iteration", sideBySide());
    const note = "iteration 4 was lost to the infrastructure on every attempt and is left out: evicted";
    const result = await analyzeRun({ pr: runDir, outDir: join(runDir, "report"), notes: [note] });
    const summary = JSON.parse(await readFile(result.paths.summaryJson, "utf8"));
    expect(summary.notes[0]).toBe(note);
    expect(result.checkRun.summary).toContain(`> ${note}`);
    expect(await readFile(result.paths.html, "utf8")).toContain(`<li>${note}</li>`);
  });

  it("reports tests that only one arm ran as new or removed", async () => {
    const runDir = await writeRun("different-sets", [
      ...sideBySide(),
      ...armRecords({ name: "[sig-network] brand new", arm: "pr", runs: 10 }),
      ...armRecords({ name: "[sig-network] dropped", arm: "baseline", runs: 10 }),
    ]);
    const result = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    const classes = new Map(result.analysis.tests.map((t) => [t.name, t.class]));
    expect(classes.get("[sig-network] brand new")).toBe("new-test");
    expect(classes.get("[sig-network] dropped")).toBe("removed");
    const junit = await readFile(result.paths.junit, "utf8");
    expect(junit).toMatch(
      /<testcase name="\[sig-network\] dropped" classname="ovn-kubernetes\.pr"[^>]*>\s*<skipped message="not run in this arm"\/>/,
    );
    expect(junit.match(/<testcase /g)).toHaveLength(2 * result.analysis.tests.length);
  });

  it("is neutral with zero iterations, and says so, rather than claiming success", async () => {
    const runDir = await writeRun("empty", [], [], false);
    const result = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    expect(result.conclusion).toBe("neutral");
    expect(result.title).toBe("No test results — 0 tests × 0 runs, mixed arches");
    expect(await readFile(result.paths.html, "utf8")).toContain("no run.json beside the results");
  });

  it("refuses input it cannot analyze: missing paths, directories without results, mixed arches, bad history", async () => {
    await expect(analyzeRun({ pr: join(dir, "nope"), outDir: dir })).rejects.toThrow(AnalysisInputError);
    await mkdir(join(dir, "empty-dir"), { recursive: true });
    await expect(analyzeRun({ pr: join(dir, "empty-dir"), outDir: dir })).rejects.toThrow(
      /no results\.jsonl/,
    );
    const mixed = await writeRun("mixed", [
      makeRecord({ name: "a" }),
      makeRecord({ name: "a", arch: "arm64", iteration: 1 }),
    ]);
    await expect(analyzeRun({ pr: mixed, outDir: mixed })).rejects.toThrow(
      /mix architectures \(amd64, arm64\)/,
    );
    const history = join(dir, "history.json");
    await writeFile(history, JSON.stringify({ tests: [{ name: "a", runs: 3, passes: 5 }] }));
    const single = await writeRun("single", [makeRecord({ name: "a" })]);
    await expect(analyzeRun({ pr: single, history, outDir: single })).rejects.toThrow(/passes exceed runs/);
  });

  it("compares against a pooled history baseline when there is no baseline arm", async () => {
    const prOnly = sideBySide().filter((r) => r.arm === "pr");
    const runDir = await writeRun("history", prOnly);
    const history = join(runDir, "history.json");
    const names = [...new Set(prOnly.map((r) => r.name))];
    await writeFile(
      history,
      JSON.stringify({
        stream: "4.18-nightly",
        runs: 30,
        from: "2024-06-01",
        to: "2024-06-10",
        tests: names.map((name) => ({ name, runs: 300, passes: 297 })),
      }),
    );
    const result = await analyzeRun({ pr: runDir, history, outDir: join(runDir, "report") });
    expect(result.analysis.baselineKind).toBe("history");
    const regressed = result.analysis.tests.find((t) => t.name === REGRESSED)!;
    expect(regressed.class).toBe("regression");
    expect(regressed.historyRule).toMatchObject({ verdict: "fail", historicalPassPercent: 99 });
    expect(result.checkRun.summary).toMatch(/pooled from 30 run\(s\) from 2024-06-01 to 2024-06-10/);
  });

  it("keeps check-run summary and text within GitHub's 65,535 characters, saying how many rows were cut", async () => {
    const many = Array.from({ length: 3000 }, (_, index) => [
      ...armRecords({
        name: `[sig-network] ${"very long name ".repeat(8)}${index}`,
        arm: "pr",
        runs: 6,
        flaked: index % 2,
      }),
      ...armRecords({
        name: `[sig-network] ${"very long name ".repeat(8)}${index}`,
        arm: "baseline",
        runs: 6,
      }),
    ]).flat();
    const runDir = await writeRun("large", many, [], false);
    const { checkRun } = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    expect(checkRun.title.length).toBeLessThan(CHECK_RUN_LIMITS.title);
    for (const part of [checkRun.summary, checkRun.text]) {
      expect(part.length).toBeLessThanOrEqual(65_535);
      const cut = part.match(/… and (\d+) more — see the full report$/);
      expect(cut).not.toBeNull();
      const rows = part
        .split("\n")
        .filter(
          (line) => line.startsWith("| ") && !line.startsWith("| verdict") && !line.startsWith("| ---"),
        );
      const total = part === checkRun.text ? 3000 : 1500;
      expect(rows.length + Number(cut![1])).toBe(total);
    }
  });
});

describe("the check run's summary by area", () => {
  const regressed = (name: string, labels?: string[], failed = 6) =>
    [
      ...armRecords({ name, arm: "pr", runs: 10, failed }),
      ...armRecords({ name, arm: "baseline", runs: 10 }),
    ].map((record) => (labels ? { ...record, labels } : record));

  it("groups what the PR broke by sig-* label, else by the [sig-…] of the name, most important area first", async () => {
    const records = [
      // The surest regression: its area comes first.
      ...regressed("[sig-network] EgressIP should move to another node", undefined, 9),
      ...regressed("[sig-network] pods should reach a service on another node"),
      // A label names the area of a spec whose name does not.
      ...regressed("CSI volumes should resize online", ["sig-storage", "Feature:Resize"]),
      ...armRecords({ name: "[sig-storage] snapshots should restore", arm: "pr", runs: 10, flaked: 3 }),
      ...armRecords({ name: "[sig-storage] snapshots should restore", arm: "baseline", runs: 10 }),
      ...armRecords({ name: "[sig-network] stable", arm: "pr", runs: 10 }),
      ...armRecords({ name: "[sig-network] stable", arm: "baseline", runs: 10 }),
    ];
    const runDir = await writeRun("areas", records);
    const { checkRun } = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    const { summary } = checkRun;
    expect(summary).toContain("By area (a test's `sig-*` label, else the `[sig-…]` of its name):");
    const network = summary.indexOf("**sig-network** — 2 regressions\n\n| verdict |");
    const storage = summary.indexOf("**sig-storage** — 1 regression · 1 new flake\n");
    expect(network).toBeGreaterThan(0);
    expect(storage).toBeGreaterThan(network);
    const rowsOf = (from: number, to: number) =>
      summary
        .slice(from, to)
        .split("\n")
        .filter((line) => /^\| (?!verdict|---)/.test(line))
        .map((line) => line.split(" | ")[1]);
    expect(rowsOf(network, storage)).toEqual([
      "\\[sig-network\\] EgressIP should move to another node",
      "\\[sig-network\\] pods should reach a service on another node",
    ]);
    expect(rowsOf(storage, summary.length)[0]).toBe("CSI volumes should resize online");
    expect(summary).not.toContain("stable |");
  });

  it("keeps one table, as before, when the notable tests share an area", async () => {
    const runDir = await writeRun("one-area", sideBySide());
    const { checkRun } = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    expect(checkRun.summary).not.toContain("By area");
    expect(checkRun.summary.match(/\| verdict \|/g)).toHaveLength(1);
  });

  it("stays within GitHub's 65,535 characters with many areas, counting the rows it cut", async () => {
    const many = Array.from({ length: 2000 }, (_, index) => {
      const name = `[sig-area-${index % 40}] ${"very long name ".repeat(8)}${index}`;
      return [
        ...armRecords({ name, arm: "pr", runs: 6, flaked: 1 }),
        ...armRecords({ name, arm: "baseline", runs: 6 }),
      ];
    }).flat();
    const runDir = await writeRun("many-areas", many, [], false);
    const { checkRun } = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    expect(checkRun.summary.length).toBeLessThanOrEqual(65_535);
    const cut = checkRun.summary.match(/… and (\d+) more — see the full report$/);
    const rows = checkRun.summary.split("\n").filter((line) => /^\| (?!verdict|---)/.test(line));
    expect(rows.length + Number(cut![1])).toBe(2000);
    expect(checkRun.summary).toMatch(/\*\*sig-area-\d+\*\* — \d+ new flakes?\n/);
  });
});

describe("analyzeRun with clusters", () => {
  const clean = [0, 0, 0, 0, 0, 0];
  const both = (name: string, pr: number[], baseline: number[]) => [
    ...clusteredRecords({ name, arm: "pr", failedPerCluster: pr }),
    ...clusteredRecords({ name, arm: "baseline", failedPerCluster: baseline }),
  ];

  it("writes per-cluster counts to summary.json and notes a test one cluster carried in the check run", async () => {
    const runDir = join(dir, "clustered");
    await mkdir(runDir, { recursive: true });
    const records = [
      ...both(REGRESSED, [2, 2, 2, 2, 2, 2], clean),
      ...both(FLAKY, [4, 1, 0, 0, 0, 0], clean),
      ...Array.from({ length: 10 }, (_, index) => both(`[sig-network] stable ${index}`, clean, clean)).flat(),
    ];
    await writeFile(join(runDir, "results.jsonl"), records.map((r) => JSON.stringify(r)).join("\n"));
    const result = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    expect(result.analysis.rule).toBe("cluster");
    expect(result.title).toContain("× 24 runs on 6 clusters");

    const summary = analysisSummarySchema.parse(JSON.parse(await readFile(result.paths.summaryJson, "utf8")));
    expect(summary.rule).toBe("cluster");
    expect(summary.clusters?.counts).toEqual({ pr: 6, baseline: 6 });
    expect(summary.clusters?.weather).toHaveLength(12);
    const flaky = summary.tests.find((test) => test.name === FLAKY)!;
    expect(flaky.clusters?.pr.map((count) => count.failed)).toEqual([4, 1, 0, 0, 0, 0]);
    expect(flaky.clusters?.dominant).toEqual({ arm: "pr", cluster: "pr-cluster-0", failed: 4, of: 5 });
    expect(summary.tests.find((test) => test.name === REGRESSED)!.class).toBe("regression");
    // A test that never failed carries no cluster counts: summary.json stays small for big runs.
    expect(summary.tests.find((test) => test.name === "[sig-network] stable 0")!.clusters).toBeUndefined();
    expect(summary.notes.join("\n")).toContain("clusters: PR 6 cluster(s)");

    const { summary: checkSummary } = result.checkRun;
    expect(checkSummary).toContain("One cluster carried most of these tests' failures:");
    expect(checkSummary).toContain("4 of 5 PR failures on cluster pr-cluster-0");
    expect(checkSummary).toContain("Iterations are grouped by the cluster they ran on (the cluster rule)");
  });

  it("says in every report that one cluster per arm cannot be told apart from the PR, and blames nothing", async () => {
    const runDir = join(dir, "one-cluster");
    await mkdir(runDir, { recursive: true });
    const records = [
      ...clusteredRecords({ name: REGRESSED, arm: "pr", failedPerCluster: [8], perCluster: 10 }),
      ...clusteredRecords({ name: REGRESSED, arm: "baseline", failedPerCluster: [0], perCluster: 10 }),
    ];
    await writeFile(join(runDir, "results.jsonl"), records.map((r) => JSON.stringify(r)).join("\n"));
    const result = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    const sentence = "1 cluster per arm: a failure-rate difference cannot be told apart from the cluster";
    expect(result.conclusion).toBe("neutral");
    expect(result.analysis.tests[0]!.class).toBe("inconclusive");
    const summary = JSON.parse(await readFile(result.paths.summaryJson, "utf8")) as { notes: string[] };
    expect(summary.notes.join("\n")).toContain(sentence);
    expect(result.checkRun.summary).toContain(sentence);
    expect(await readFile(result.paths.html, "utf8")).toContain(sentence);
    expect(await readFile(result.paths.junit, "utf8")).toContain("cannot be told apart from the cluster");
  });

  it("keeps the iteration rule for records without a cluster, and says which rule ran", async () => {
    const runDir = join(dir, "unclustered");
    await mkdir(runDir, { recursive: true });
    await writeFile(
      join(runDir, "results.jsonl"),
      sideBySide()
        .map((r) => JSON.stringify(r))
        .join("\n"),
    );
    const result = await analyzeRun({ pr: runDir, outDir: join(runDir, "report") });
    expect(result.analysis.rule).toBe("iteration");
    expect(result.checkRun.summary).toContain("every iteration counted as an independent draw");
    expect(result.checkRun.summary).not.toContain("cluster rule");
  });
});
