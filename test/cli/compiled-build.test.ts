import { constants } from "node:fs";
import { access, copyFile, mkdir, readdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGRESSED_TEST } from "@netstress/testbed/sample-ext/suites.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { githubAppKey } from "../helpers/github-app-key.ts";
import { runNode } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: { path: string; remove: () => Promise<void> };

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("the compiled build (the image's netstress)", () => {
  it("builds, and runs the whole demo from JavaScript alone: payloads, clusters from Hive, plan, an adaptive run of both arms, analysis, report", async () => {
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
    // Before the stress run, what its design can see: an adaptive run whose arms' payloads differ
    // runs a crossover by upgrade, and its budget is priced as one.
    const power = demo.stdout.search(
      /This run can see 2% → 52% with 80% power in every test it decides within its budget of 200 iterations \(adaptive: crossover by upgrade, each cluster running the baseline payload, then upgraded to the PR payload, 500 tests assumed.*\); .*spent as a fixed crossover run \(4 clusters × \d+ iterations per arm, installs and upgrades included\), the budget would see .* on a clean test/,
    );
    expect(power).toBeGreaterThanOrEqual(0);
    expect(power).toBeLessThan(demo.stdout.indexOf("batch 1: 4 new cluster(s) on the released payload"));
    // It stops once every test is decided, within its budget, and says why each test stopped.
    const stopped =
      /adaptive run \(crossover by upgrade\): 1 regression\(s\), (\d+) clean, 0 undecided; it stopped once every test was decided, after \d+ batch\(es\) and (\d+) of a budget of (\d+) test executions/.exec(
        demo.stdout,
      );
    expect(stopped).not.toBeNull();
    const [, clean, spent, budget] = stopped!.map(Number);
    expect(clean).toBeGreaterThanOrEqual(10);
    expect(spent).toBeLessThanOrEqual(budget!);
    const why = demo.stdout.slice(demo.stdout.indexOf("why each test stopped:"));
    expect(why).toMatch(
      new RegExp(
        `regression {2}${escapeRegExp(REGRESSED_TEST)}\\n +decided regression after batch \\d+: fails \\+[\\d.]+ points more often in the PR`,
      ),
    );
    expect(why.match(/^ {2}clean {7}/gm)).toHaveLength(clean!);
    expect(why.match(/decided clean after batch \d+: rules out a rise of \+50 points or more/g)).toHaveLength(
      clean!,
    );
    // Every execution, analyzed as one run below the decisions, for detail.
    expect(demo.stdout).toContain("failure: 1 regression");
    const report = await readFile(join(out, "run", "report.html"), "utf8");
    expect(report).toContain("<canvas");
    expect(report).toContain("Adaptive run (crossover by upgrade): why each test stopped");

    // Each cluster from the simulated Hive runs the released payload for the baseline arm, is
    // upgraded, and runs the PR payload for the PR arm: the same clusters in both arms.
    const layout = JSON.parse(await readFile(join(out, "payload", "index.json"), "utf8")) as {
      manifests: { digest: string; annotations: Record<string, string> }[];
    };
    const digestOf = (name: string) =>
      layout.manifests.find((m) => m.annotations["org.opencontainers.image.ref.name"] === name)!.digest;
    const batchDirs = (await readdir(join(out, "run"))).filter((name) => name.startsWith("batch-"));
    expect(batchDirs).toContain("batch-1-baseline");
    const records = (
      await Promise.all(batchDirs.map((name) => readFile(join(out, "run", name, "results.jsonl"), "utf8")))
    )
      .flatMap((text) => text.trim().split("\n"))
      .map((l) => JSON.parse(l) as ResultRecord);
    const clustersOf = (arm: string) => new Set(records.filter((r) => r.arm === arm).map((r) => r.cluster!));
    for (const [arm, payload] of [
      ["pr", digestOf("pr-release")],
      ["baseline", digestOf("release")],
    ] as const) {
      const mine = records.filter((r) => r.arm === arm);
      for (const cluster of clustersOf(arm)) {
        expect(cluster).toMatch(/^demo-hive\/nst-/);
        expect(report).toContain(cluster);
        expect(demo.stdout).toContain(
          `${arm.padEnd(8)}  ${cluster}  running quay.io/netstress-sample/release@${payload}`,
        );
      }
      expect(mine.every((r) => r.payload?.endsWith(`@${payload}`))).toBe(true);
    }
    // The PR arm ran on clusters upgraded after their baseline half, and on new ones claimed on the
    // PR payload that confirmed the regression, never upgraded.
    const upgraded = [...clustersOf("pr")].filter((cluster) => clustersOf("baseline").has(cluster));
    expect(upgraded.length).toBeGreaterThan(0);
    expect(clustersOf("pr").size).toBeGreaterThan(upgraded.length);
    expect(demo.stdout).toContain("new on the PR payload (PR arm, never upgraded: confirming)");
    // The regression is the PR build running in the upgraded clusters: NodePort fails there.
    const nodePortFailures = (arm: string) =>
      records.filter((r) => r.arm === arm && r.name === REGRESSED_TEST && r.result === "failed").length;
    expect(nodePortFailures("pr")).toBeGreaterThanOrEqual(3 + nodePortFailures("baseline"));
    expect(demo.stdout).toMatch(/clusters: {2}\d+ given back; none left on the hub/);
  }, 480_000);

  it("builds as the image does, without the test bed: no simulator, lab or sample code, and the commands that need it say so", async () => {
    // The image's layout: node_modules as `npm ci --omit=dev` leaves it, with no test bed linked.
    const app = join(dir.path, "image");
    await mkdir(join(app, "bin"), { recursive: true });
    await mkdir(join(app, "node_modules"));
    for (const name of await readdir(join(ROOT, "node_modules")))
      if (name !== "@netstress")
        await symlink(join(ROOT, "node_modules", name), join(app, "node_modules", name));
    await copyFile(join(ROOT, "bin", "netstress-compiled.js"), join(app, "bin", "netstress-compiled.js"));
    const build = await runNode([
      join(ROOT, "scripts", "build.mjs"),
      "--no-check",
      "--without-testbed",
      join(app, "dist"),
    ]);
    expect(build.code).toBe(0);
    const emitted = await readdir(join(app, "dist"), { recursive: true });
    expect(
      emitted.filter((path) => /packages\/testbed|\/sim\/|\/lab\/|sample-(ext|payload)/.test(path)),
    ).toEqual([]);
    const bundle = await Promise.all(
      (await readdir(join(app, "dist", "bundle"))).map((name) =>
        readFile(join(app, "dist", "bundle", name), "utf8"),
      ),
    );
    // None of the test bed's code is bundled in its place: its entry points are not defined anywhere.
    const definitions = /function (startFakeHive|startSimulatedCluster|startLab|buildSamplePayload)\(/;
    expect(bundle.filter((text) => definitions.test(text))).toEqual([]);

    const cli = join(app, "bin", "netstress-compiled.js");
    const help = await runNode([cli, "--help"]);
    expect(help.code).toBe(0);
    // `serve` reads its settings first: a real App's, so that it gets as far as the sample payload.
    const serveSettings = {
      APP_ID: "1",
      PRIVATE_KEY: githubAppKey(),
      WEBHOOK_SECRET: "a-webhook-secret-of-length",
      NETSTRESS_DATA_DIR: join(app, "data"),
    };
    for (const args of [["demo"], ["lab", "status"], ["serve", "--sample-payload", "--no-workers"]]) {
      const result = await runNode([cli, ...args], {
        env: { PATH: process.env.PATH, ...(args[0] === "serve" ? serveSettings : {}) },
      });
      expect(result.stderr).toContain(
        `netstress: ${args[0] === "serve" ? "serve --sample-payload" : args[0]} needs the test bed (@netstress/testbed`,
      );
      expect(result.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|at .*\.js:\d+/);
      expect(result.code).toBe(2);
    }
  }, 240_000);

  it("says how to get a build when there is none", async () => {
    const bare = join(dir.path, "bare", "bin");
    await mkdir(bare, { recursive: true });
    await copyFile(join(ROOT, "bin", "netstress-compiled.js"), join(bare, "netstress-compiled.js"));
    const result = await runNode([join(bare, "netstress-compiled.js"), "--help"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("npm run build");
  });
});
