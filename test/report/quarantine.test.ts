import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyzeRun } from "../../src/report/analyze-run.ts";
import { armRecords } from "../analysis/make-records.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const FLAKY = "[sig-network] services answer on a NodePort";
const STABLE = "[sig-network] pods reach pods";
let dir: Awaited<ReturnType<typeof tempDir>>;
let results: string;

beforeAll(async () => {
  dir = await tempDir();
  results = join(dir.path, "results.jsonl");
  const records = [
    ...armRecords({ name: FLAKY, arm: "pr", runs: 10, failed: 8 }),
    ...armRecords({ name: FLAKY, arm: "baseline", runs: 10 }),
    ...armRecords({ name: STABLE, arm: "pr", runs: 10 }),
    ...armRecords({ name: STABLE, arm: "baseline", runs: 10 }),
  ];
  await writeFile(results, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
});
afterAll(async () => dir.remove());

describe("a quarantined test", () => {
  it("still runs and is reported, with why and since when, and never fails the conclusion", async () => {
    const plain = await analyzeRun({ pr: results, outDir: join(dir.path, "plain") });
    expect(plain.conclusion).toBe("failure");

    const quarantine = [
      { test: FLAKY, reason: "OCPBUGS-1234: NodePort flakes on every stream", since: "2026-11-20" },
    ];
    const result = await analyzeRun({ pr: results, outDir: join(dir.path, "quarantined"), quarantine });
    expect(result.conclusion).not.toBe("failure");
    const verdict = result.analysis.tests.find((t) => t.name === FLAKY)!;
    expect(verdict).toMatchObject({
      class: "regression",
      lifecycle: "informing",
      quarantine: { since: "2026-11-20" },
    });
    expect(result.checkRun.text).toContain("quarantined since 2026-11-20: OCPBUGS-1234");
    const summary = JSON.parse(await readFile(result.paths.summaryJson, "utf8")) as {
      tests: { name: string; quarantine?: { reason: string } }[];
    };
    expect(summary.tests.find((t) => t.name === FLAKY)?.quarantine?.reason).toContain("OCPBUGS-1234");
    expect(await readFile(result.paths.html, "utf8")).toContain("quarantined since 2026-11-20");
  });
});
