import { constants } from "node:fs";
import { access, copyFile, mkdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGRESSED_TEST } from "../../examples/sample-ext/suites.ts";
import type { ResultRecord } from "../../src/runner/result-record.ts";
import { runNode } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: { path: string; remove: () => Promise<void> };

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("the compiled build (the image's netstress)", () => {
  it("builds, and runs the whole demo from JavaScript alone: payloads, clusters from Hive, plan, both arms, analysis, report", async () => {
    // The image's layout: bin/ beside dist/ and node_modules/.
    const app = join(dir.path, "app");
    await mkdir(join(app, "bin"), { recursive: true });
    await symlink(join(ROOT, "node_modules"), join(app, "node_modules"));
    await copyFile(join(ROOT, "bin", "netstress-compiled.js"), join(app, "bin", "netstress-compiled.js"));
    // Types are `tsc --noEmit`'s to check (lint and CI run it); what this proves is that the emitted
    // JavaScript runs, so the build here skips the type-check, two thirds of its time.
    const build = await runNode([join(ROOT, "scripts", "build.mjs"), "--no-check", join(app, "dist")]);
    expect(build.stderr).toContain("html-report-client.js");
    expect(build.code).toBe(0);
    // The runner's process spawner is built with it, so the image's runs never fork the runner.
    await access(join(app, "dist", "src", "runner", "native", "netstress-spawner"), constants.X_OK);

    const out = join(dir.path, "demo");
    const demo = await runNode([join(app, "bin", "netstress-compiled.js"), "demo", "--out", out], {
      // No TypeScript loader anywhere: a source file reached at run time would fail to load.
      env: {
        ...process.env,
        NODE_OPTIONS: "",
        SAMPLE_EXT_TIME_SCALE: "0.05",
        NETSTRESS_BINARY_ENV: "SAMPLE_EXT_TIME_SCALE",
      },
    });
    expect(demo.stderr).not.toMatch(/ERR_UNKNOWN_FILE_EXTENSION|Cannot find module/);
    expect(demo.stderr).not.toContain("start with Node's spawn");
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain("failure: 1 regression");
    // Before the stress run, what its design (2 clusters × 5 iterations per arm) can see and what 2% → 10% needs.
    const power = demo.stdout.search(
      /This run can see .* on a clean test, .* with 80% power \(2 clusters × 5 iterations per arm, separate clusters, 500 tests assumed.*\); for 2% → 10% you need /,
    );
    expect(power).toBeGreaterThanOrEqual(0);
    expect(power).toBeLessThan(demo.stdout.indexOf("executions recorded"));
    const report = await readFile(join(out, "run", "report.html"), "utf8");
    expect(report).toContain("<canvas");

    // Two clusters per arm from the simulated Hive, each named on its records and in the report;
    // the PR arm's run the PR payload (by digest), the baseline's the released one.
    const layout = JSON.parse(await readFile(join(out, "payload", "index.json"), "utf8")) as {
      manifests: { digest: string; annotations: Record<string, string> }[];
    };
    const digestOf = (name: string) =>
      layout.manifests.find((m) => m.annotations["org.opencontainers.image.ref.name"] === name)!.digest;
    const records = (await readFile(join(out, "run", "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ResultRecord);
    for (const [arm, payload] of [
      ["pr", digestOf("pr-release")],
      ["baseline", digestOf("release")],
    ] as const) {
      const mine = records.filter((r) => r.arm === arm);
      const clusters = new Set(mine.map((r) => r.cluster));
      expect(clusters.size).toBe(2);
      for (const cluster of clusters) {
        expect(cluster).toMatch(/^demo-hive\/nst-/);
        expect(report).toContain(cluster!);
        expect(demo.stdout).toContain(`${cluster!}  running quay.io/netstress-sample/release@${payload}`);
      }
      expect(mine.every((r) => r.payload?.endsWith(`@${payload}`))).toBe(true);
    }
    // The regression is the PR build running in the PR arm's clusters: NodePort fails there.
    const nodePortFailures = (arm: string) =>
      records.filter((r) => r.arm === arm && r.name === REGRESSED_TEST && r.result === "failed").length;
    expect(nodePortFailures("pr")).toBeGreaterThanOrEqual(3 + nodePortFailures("baseline"));
    expect(demo.stdout).toContain("clusters:  4 given back; none left on the hub");
  }, 180_000);

  it("says how to get a build when there is none", async () => {
    const bare = join(dir.path, "bare", "bin");
    await mkdir(bare, { recursive: true });
    await copyFile(join(ROOT, "bin", "netstress-compiled.js"), join(bare, "netstress-compiled.js"));
    const result = await runNode([join(bare, "netstress-compiled.js"), "--help"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("npm run build");
  });
});
