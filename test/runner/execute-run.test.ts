import { spawn } from "node:child_process";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSampleBinaries,
  type SampleBinaries,
} from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { executeRun } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { runManifestSchema } from "../../src/runner/run-manifest.ts";
import { ADVERSARIAL, writeAdversarialBinary } from "../helpers/adversarial-binary.ts";
import { buildSpawner } from "../helpers/build-spawner.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let samples: SampleBinaries;
let adversarial: string;
const arch = hostArch();
const env = { ...process.env, SAMPLE_EXT_SEED: "runner-tests", SAMPLE_EXT_TIME_SCALE: "0.05" };

beforeAll(async () => {
  dir = await tempDir();
  samples = await buildSampleBinaries({ outDir: join(dir.path, "samples"), gzip: true });
  adversarial = await writeAdversarialBinary(dir.path, { floodMiB: 4 });
});
afterAll(() => dir.remove());

const twoArmPlan = (): ExecutionPlan => ({
  arch,
  arms: [
    {
      arm: "pr",
      components: [
        { component: "ovn-kubernetes", binary: samples.pr["ovn-kubernetes"], source: "override" },
        { component: "sdn", binary: samples.released.sdn, source: "released" },
      ],
    },
    {
      arm: "baseline",
      components: [
        { component: "ovn-kubernetes", binary: samples.released["ovn-kubernetes"], source: "released" },
        { component: "sdn", binary: samples.released.sdn, source: "released" },
      ],
    },
  ],
});

/** The adversarial binary alone in the PR arm, narrowed to `tests` when given. */
const adversarialPlan = (tests?: string[]): ExecutionPlan => ({
  arch,
  arms: [
    {
      arm: "pr",
      components: [{ component: "adversarial", binary: adversarial, ...(tests ? { tests } : {}) }],
    },
  ],
});

async function readAll(path: string): Promise<ResultRecord[]> {
  const records: ResultRecord[] = [];
  for await (const r of readResultRecords(path)) records.push(r);
  return records;
}

describe("executeRun with the sample binaries", () => {
  it("records every test of both arms in every iteration, with the record contract", async () => {
    const outDir = join(dir.path, "two-arms");
    const { outcome, paths } = await executeRun({
      plan: twoArmPlan(),
      outDir,
      iterations: 2,
      parallel: 6,
      seed: "s1",
      timeoutMs: 30_000,
      retries: 0,
      env,
    });
    expect(outcome.status).toBe("completed");
    const records = await readAll(paths.results);
    // PR ovn-kubernetes has 9 tests (one new), released ovn-kubernetes 8, sdn 4 in each arm.
    expect(records.filter((r) => r.arm === "pr")).toHaveLength((9 + 4) * 2);
    expect(records.filter((r) => r.arm === "baseline")).toHaveLength((8 + 4) * 2);
    expect(new Set(records.map((r) => r.iteration))).toEqual(new Set([0, 1]));
    const prOvn = records.find((r) => r.arm === "pr" && r.component === "ovn-kubernetes");
    expect(prOvn).toMatchObject({ arch, source: "override", attempt: 0 });
    expect(prOvn?.startTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6} UTC$/);

    const manifest = runManifestSchema.parse(JSON.parse(await readFile(paths.manifest, "utf8")));
    expect(manifest.status).toBe("completed");
    expect(manifest.components.find((c) => c.arm === "pr" && c.component === "ovn-kubernetes")).toMatchObject(
      {
        source: "override",
        tests: 9,
      },
    );

    const junit = await readFile(paths.junit, "utf8");
    expect(junit.match(/<testcase /g)).toHaveLength(records.length);
    expect(junit).toContain('<testsuite name="network-stress pr');
    const failures = records.filter((r) => r.result === "failed").length;
    const junitFailures = [...junit.matchAll(/failures="(\d+)"/g)].reduce((s, m) => s + Number(m[1]), 0);
    expect(junitFailures).toBe(failures);
  });

  it("repeats the same execution order for the same seed", async () => {
    const order = async (seed: string, name: string) => {
      const { paths } = await executeRun({
        plan: {
          arch,
          arms: [
            {
              arm: "pr",
              components: [
                { component: "sdn", binary: samples.released.sdn },
                {
                  component: "adversarial",
                  binary: adversarial,
                  tests: [ADVERSARIAL.passes, ADVERSARIAL.fails],
                },
              ],
            },
          ],
        },
        outDir: join(dir.path, name),
        iterations: 2,
        parallel: 1,
        seed,
        timeoutMs: 30_000,
        retries: 0,
        env,
      });
      return (await readAll(paths.results)).map((r) => `${r.iteration}/${r.component}/${r.name}`);
    };
    const first = await order("same", "seed-a");
    expect(await order("same", "seed-b")).toEqual(first);
    expect(await order("other", "seed-c")).not.toEqual(first);
  });

  it("narrows the run to tests whose name contains --focus", async () => {
    const { paths } = await executeRun({
      plan: twoArmPlan(),
      outDir: join(dir.path, "focus"),
      iterations: 2,
      parallel: 4,
      seed: "f",
      timeoutMs: 30_000,
      retries: 0,
      focus: "NodePort",
      env,
    });
    const names = new Set((await readAll(paths.results)).map((r) => r.name));
    expect([...names]).toHaveLength(1);
    expect([...names][0]).toContain("NodePort");
  });

  it("says why tests start with Node's spawn when there is no process spawner, and runs them all the same", async () => {
    const notices: string[] = [];
    const { outcome } = await executeRun({
      plan: twoArmPlan(),
      outDir: join(dir.path, "no-spawner"),
      iterations: 1,
      parallel: 4,
      seed: "n",
      timeoutMs: 30_000,
      retries: 0,
      focus: "NodePort",
      env,
      spawnerExecutable: join(dir.path, "no-such-spawner"),
      onNotice: (message) => notices.push(message),
    });
    expect(outcome.done).toBe(2);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/start with Node's spawn.*build it with `bash scripts\/build-spawner.sh`/);
  });

  it("retries a failure within its iteration and records both attempts", async () => {
    const { paths, outcome } = await executeRun({
      plan: adversarialPlan([ADVERSARIAL.fails, ADVERSARIAL.passes]),
      outDir: join(dir.path, "retries"),
      iterations: 2,
      parallel: 2,
      seed: "r",
      timeoutMs: 10_000,
      retries: 2,
      env,
    });
    const records = await readAll(paths.results);
    const fails = records.filter((r) => r.name === ADVERSARIAL.fails);
    expect(fails.map((r) => r.attempt).sort()).toEqual([0, 0, 1, 1, 2, 2]);
    expect(records.filter((r) => r.name === ADVERSARIAL.passes)).toHaveLength(2);
    expect(outcome.blockingFailures.pr).toBe(2);
  });

  it("survives every kind of misbehaving binary and records a reasoned failure for each", async () => {
    const { paths, outcome } = await executeRun({
      plan: adversarialPlan(),
      outDir: join(dir.path, "adversarial"),
      iterations: 1,
      parallel: 4,
      seed: "a",
      // Long enough for a loaded machine to start and finish the well-behaved tests; the hang hits it.
      timeoutMs: 6_000,
      retries: 0,
      env,
    });
    expect(outcome.status).toBe("completed");
    const byName = new Map((await readAll(paths.results)).map((r) => [r.name, r]));
    expect(byName.get(ADVERSARIAL.crash)?.harnessError).toBe("crashed");
    expect(byName.get(ADVERSARIAL.hang)?.harnessError).toBe("timeout");
    expect(byName.get(ADVERSARIAL.garbage)?.harnessError).toBe("no-result");
    expect(byName.get(ADVERSARIAL.noResult)?.harnessError).toBe("no-result");
    expect(byName.get(ADVERSARIAL.malformed)?.harnessError).toBe("malformed-result");
    expect(byName.get(ADVERSARIAL.passes)?.result).toBe("passed");
    // The informing test failed too, but informing failures never count as blocking.
    expect(byName.get(ADVERSARIAL.informing)?.result).toBe("failed");
    expect(outcome.blockingFailures.pr).toBe(6);
  });

  it("on cancellation kills running tests, keeps finished results and marks the run cancelled", async () => {
    const controller = new AbortController();
    const outDir = join(dir.path, "cancelled");
    const started = Date.now();
    const run = executeRun({
      plan: adversarialPlan([ADVERSARIAL.passes, ADVERSARIAL.hang]),
      outDir,
      iterations: 50,
      parallel: 2,
      seed: "c",
      timeoutMs: 60_000,
      retries: 0,
      signal: controller.signal,
      env,
      // Cancelled once something finished (a fixed delay is too short on a loaded machine).
      onRecord: () => controller.abort("cancelled by SIGINT"),
    });
    const { outcome, paths } = await run;
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(outcome.status).toBe("cancelled");
    const records = await readAll(paths.results);
    expect(records.every((r) => r.name !== ADVERSARIAL.hang)).toBe(true);
    expect(records.length).toBeGreaterThan(0);
    const manifest = runManifestSchema.parse(JSON.parse(await readFile(paths.manifest, "utf8")));
    expect(manifest).toMatchObject({ status: "cancelled", reason: "cancelled by SIGINT" });
  });

  it("refuses a plan whose binary does not list a planned test", async () => {
    await expect(
      executeRun({
        plan: {
          arch,
          arms: [
            {
              arm: "pr",
              components: [{ component: "sdn", binary: samples.released.sdn, tests: ["no such test"] }],
            },
          ],
        },
        outDir: join(dir.path, "unknown"),
        iterations: 1,
        parallel: 1,
        seed: "u",
        timeoutMs: 10_000,
        retries: 0,
        env,
      }),
    ).rejects.toThrow(/does not list 1 planned test\(s\), e\.g\. "no such test"/);
  });

  it("refuses a plan that names a binary's image but no file: fetching it is the executor's", async () => {
    const image = "quay.io/openshift/sdn@sha256:" + "a".repeat(64);
    await expect(
      executeRun({
        plan: {
          arch,
          arms: [
            {
              arm: "pr",
              components: [
                {
                  component: "sdn",
                  image,
                  digest: "sha256:" + "b".repeat(64),
                  imagePath: "/usr/bin/sdn-tests-ext.gz",
                },
              ],
            },
          ],
        },
        outDir: join(dir.path, "image-only"),
        iterations: 1,
        parallel: 1,
        seed: "i",
        timeoutMs: 10_000,
        retries: 0,
        env,
      }),
    ).rejects.toThrow(`sdn (pr): the plan names its binary's image (${image}), not a file; fetch it first`);
  });
});

/**
 * An OTE binary with one test that appends, for every verb it answers, the command line of the
 * process that started it to `log`; its test sleeps `sleepSeconds` and passes.
 */
async function writeParentLogger(path: string, log: string, sleepSeconds: number): Promise<string> {
  await writeFile(
    path,
    `#!${process.execPath}
const fs = require("node:fs");
const verb = process.argv[2];
const parent = fs.readFileSync("/proc/" + process.ppid + "/cmdline", "utf8").split("\\0").join(" ");
fs.appendFileSync(${JSON.stringify(log)}, verb + ": " + parent + "\\n");
if (verb === "info") console.log(JSON.stringify({ apiVersion: "v1.1", source: {}, component: { product: "p", type: "t", name: "logger" }, suites: [] }));
if (verb === "list") console.log(JSON.stringify({ name: "logs its parent", labels: {}, lifecycle: "blocking" }));
if (verb === "run-test") setTimeout(() => {
  const now = new Date().toISOString().replace("T", " ").replace("Z", "000 UTC");
  console.log(JSON.stringify({ name: "logs its parent", lifecycle: "blocking", duration: 1, startTime: now, endTime: now, result: "passed", output: "" }));
}, ${sleepSeconds * 1000});
`,
  );
  await chmod(path, 0o755);
  return path;
}

describe("executeRun with a spawner socket (--spawner-socket)", () => {
  const loggerPlan = (binary: string): ExecutionPlan => ({
    arch,
    arms: [{ arm: "pr", components: [{ component: "logger", binary }] }],
  });
  const listen = async (socket: string) => {
    const executable = await buildSpawner(join(dir.path, "netstress-spawner"));
    const child = spawn(executable, ["--listen", socket], { stdio: "ignore" });
    return { child, exited: new Promise((resolve) => child.on("close", resolve)) };
  };

  it("starts every binary, info and list included, from the spawner listening there, never itself", async () => {
    const log = join(dir.path, "parents.log");
    const binary = await writeParentLogger(join(dir.path, "logger"), log, 0);
    const socket = join(dir.path, "run.sock");
    const spawner = await listen(socket);
    const { outcome } = await executeRun({
      plan: loggerPlan(binary),
      outDir: join(dir.path, "through-socket"),
      iterations: 2,
      parallel: 1,
      seed: "sock",
      timeoutMs: 30_000,
      retries: 0,
      env,
      spawnerSocket: socket,
    });
    expect(outcome).toMatchObject({ status: "completed", done: 2, failed: 0 });
    const parents = (await readFile(log, "utf8")).trim().split("\n");
    expect(parents.map((line) => line.split(":")[0]).sort()).toEqual([
      "info",
      "list",
      "run-test",
      "run-test",
    ]);
    for (const line of parents) expect(line).toMatch(/netstress-spawner --listen .*run\.sock\s*$/);
    // The run closed its connection: the spawner ended.
    await spawner.exited;
  });

  it("fails, its tests lost and not failed, when the spawner goes away during the run", async () => {
    const binary = await writeParentLogger(join(dir.path, "slow-logger"), join(dir.path, "slow.log"), 600);
    const socket = join(dir.path, "dies.sock");
    const spawner = await listen(socket);
    const running = executeRun({
      plan: loggerPlan(binary),
      outDir: join(dir.path, "spawner-dies"),
      iterations: 3,
      parallel: 1,
      seed: "dies",
      timeoutMs: 600_000,
      retries: 0,
      env,
      spawnerSocket: socket,
      onProgress: () => {},
      onRecord: () => {},
    });
    // Killed once the first test runs (its info and list have been answered).
    for (
      let i = 0;
      i < 200 && !(await readFile(join(dir.path, "slow.log"), "utf8").catch(() => "")).includes("run-test");
      i++
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    spawner.child.kill("SIGKILL");
    await expect(running).rejects.toThrow(/the process spawner went away: .*; the run is incomplete/);
  });
});
