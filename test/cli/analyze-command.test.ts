import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { armRecords } from "../analysis/make-records.ts";
import { runNetstress } from "../helpers/run-netstress.ts";

let dir: string;
async function results(name: string, records: ResultRecord[]): Promise<string> {
  await mkdir(join(dir, name), { recursive: true });
  const path = join(dir, name, "results.jsonl");
  await writeFile(path, records.map((r) => JSON.stringify(r)).join("\n"));
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "netstress-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// Each case starts the real CLI (TypeScript loaded at start-up), which is slow on a busy machine.
describe("netstress analyze", { timeout: 90_000 }, () => {
  it("exits 1 on a blocking regression and prints where the reports are", async () => {
    const pr = await results("pr", armRecords({ name: "t", arm: "pr", runs: 10, failed: 7 }));
    const baseline = await results("baseline", armRecords({ name: "t", arm: "baseline", runs: 10 }));
    const out = join(dir, "out");
    const { code, stdout } = await runNetstress([
      "analyze",
      "--pr",
      pr,
      "--baseline",
      baseline,
      "--out",
      out,
    ]);
    expect(code).toBe(1);
    expect(stdout).toContain("failure: 1 regression — 1 tests × 10 runs, amd64");
    expect(stdout).toContain(join(out, "report.html"));
    expect(existsSync(join(out, "summary.json"))).toBe(true);
  });

  it("exits 0 when nothing got worse, writing beside the results by default", async () => {
    const both = await results("both", [
      ...armRecords({ name: "t", arm: "pr", runs: 10 }),
      ...armRecords({ name: "t", arm: "baseline", runs: 10 }),
    ]);
    const { code, stdout } = await runNetstress(["analyze", "--pr", join(dir, "both")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^success: No regressions/);
    expect(existsSync(join(dir, "both", "report.html"))).toBe(true);
    expect(both).toContain("results.jsonl");
  });

  it("exits 2 with a one-line reason on usage and input errors", async () => {
    const missing = await runNetstress(["analyze"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/give the PR results: --pr/);
    const absent = await runNetstress(["analyze", "--pr", join(dir, "does-not-exist.jsonl")]);
    expect(absent.code).toBe(2);
    expect(absent.stderr.trim().split("\n")).toHaveLength(1);
    expect(absent.stderr).toMatch(/cannot read .*does-not-exist\.jsonl/);
  });
});
