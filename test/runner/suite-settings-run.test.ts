import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { parseGoDuration } from "@netstress/core/model/parse-go-duration.ts";
import { parseOteTimestamp } from "../../src/ote/parse-ote-timestamp.ts";
import { executeRun, type ExecuteRunOptions } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { runManifestSchema } from "../../src/runner/run-manifest.ts";
import { fixtureInfo, fixtureSpec, writeProtocolFixture } from "../helpers/protocol-fixture-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const HANG = "[sig-network][strict] hangs";
const QUICK = ["a", "b", "c", "d"].map((x) => `[sig-network][strict] takes a moment ${x}`);
const DISRUPTIVE = "[sig-network][strict][Disruptive] restarts a node";
const OUTSIDE = "[sig-network] is not in the suite";
const SECOND = 1_000_000_000; // a Go time.Duration in JSON: nanoseconds

let dir: { path: string; remove: () => Promise<void> };
let binary: string;

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeProtocolFixture(join(dir.path, "strict-tests-ext"), {
    info: fixtureInfo("strict", [
      {
        name: "fixture/strict",
        qualifiers: ['name.contains("[strict]")'],
        count: 2,
        parallelism: 2,
        testTimeout: 3 * SECOND,
        clusterStability: "Disruptive",
      },
      // A child's own settings never apply when its parent runs.
      {
        name: "fixture/strict/child",
        parents: ["fixture/strict"],
        qualifiers: ['name.contains("moment")'],
        parallelism: 8,
        testTimeout: 60 * SECOND,
      },
    ]),
    listLines: [HANG, ...QUICK, DISRUPTIVE, OUTSIDE].map((name) => fixtureSpec(name)),
    tests: {
      [HANG]: { sleepMs: "forever" },
      // Long enough that tests started together overlap even when starting each one is slow (a loaded machine).
      ...Object.fromEntries(QUICK.map((name) => [name, { sleepMs: 1_500 }])),
      [DISRUPTIVE]: { sleepMs: 10 },
      [OUTSIDE]: { sleepMs: 10 },
    },
  });
});
afterAll(() => dir.remove());

async function run(name: string, settings: Partial<ExecuteRunOptions> = {}) {
  const { paths } = await executeRun({
    plan: {
      arch: hostArch(),
      selection: { suite: "fixture/strict" },
      arms: [{ arm: "pr", components: [{ component: "strict", binary }] }],
    },
    outDir: join(dir.path, name),
    seed: name,
    retries: 0,
    env: { ...process.env, KUBECONFIG: "" },
    ...settings,
  });
  const records: ResultRecord[] = [];
  for await (const r of readResultRecords(paths.results)) records.push(r);
  const manifest = runManifestSchema.parse(JSON.parse(await readFile(paths.manifest, "utf8")));
  return { records, manifest };
}

/** The most executions that ran at one moment, from the records' start and end times. */
function mostAtOnce(records: readonly ResultRecord[]): number {
  const events = records.flatMap((r) => [
    { at: parseOteTimestamp(r.startTime!)!.getTime(), delta: 1 },
    { at: parseOteTimestamp(r.endTime!)!.getTime(), delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let most = 0;
  for (const e of events) most = Math.max(most, (now += e.delta));
  return most;
}

describe("a suite's settings apply to its tests with --suite", () => {
  it("runs each test count times, at most parallelism at once, failing a hang at the suite's testTimeout", async () => {
    const { records, manifest } = await run("suite-settings");
    expect(manifest).toMatchObject({
      iterations: 2,
      parallel: 2,
      timeoutMs: 3_000,
      suiteSettings: { count: 2, parallelism: 2, testTimeoutMs: 3_000, disruptive: true },
    });
    // The suite is expected to disrupt the cluster: its [Disruptive] test runs without asking.
    expect(new Set(records.map((r) => r.name))).toEqual(new Set([HANG, ...QUICK, DISRUPTIVE]));
    expect(records).toHaveLength(6 * 2);
    const hangs = records.filter((r) => r.name === HANG);
    expect(hangs.map((r) => [r.result, r.harnessError])).toEqual([
      ["failed", "timeout"],
      ["failed", "timeout"],
    ]);
    for (const r of hangs) expect(r.duration).toBeLessThan(10_000);
    expect(records.filter((r) => QUICK.includes(r.name)).every((r) => r.result === "passed")).toBe(true);
    expect(mostAtOnce(records)).toBeLessThanOrEqual(2);
  }, 60_000);

  it("lets flags given explicitly win over the suite's settings, as openshift-tests does", async () => {
    const { records, manifest } = await run("explicit", {
      iterations: 1,
      parallel: 6,
      timeoutMs: 20_000,
      focus: "takes a moment",
    });
    expect(manifest).toMatchObject({ iterations: 1, parallel: 6, timeoutMs: 20_000 });
    expect(records).toHaveLength(4);
    expect(mostAtOnce(records)).toBeGreaterThan(2);
  }, 60_000);
});

describe("a spec's resources.timeout", () => {
  const HINTED = "[sig-network] says it needs at most 400ms";
  const UNHINTED = "[sig-network] says nothing about its time";

  it("is the test's timeout unless the run was given one", async () => {
    const hinted = await writeProtocolFixture(join(dir.path, "hints-tests-ext"), {
      info: fixtureInfo("hints"),
      listLines: [
        fixtureSpec(HINTED, { resources: { isolation: {}, timeout: "400ms" } }),
        fixtureSpec(UNHINTED, { resources: { isolation: {}, timeout: "" } }),
      ],
      tests: { [HINTED]: { sleepMs: 1_500 }, [UNHINTED]: { sleepMs: 1_500 } },
    });
    const results = async (name: string, timeoutMs?: number) => {
      const { paths } = await executeRun({
        plan: {
          arch: hostArch(),
          arms: [{ arm: "pr", components: [{ component: "hints", binary: hinted }] }],
        },
        outDir: join(dir.path, name),
        seed: name,
        iterations: 1,
        retries: 0,
        env: { ...process.env, KUBECONFIG: "" },
        ...(timeoutMs ? { timeoutMs } : {}),
      });
      const byName: Record<string, string> = {};
      for await (const r of readResultRecords(paths.results)) byName[r.name] = r.harnessError ?? r.result;
      return byName;
    };
    expect(await results("hinted")).toEqual({ [HINTED]: "timeout", [UNHINTED]: "passed" });
    expect(await results("given", 10_000)).toEqual({ [HINTED]: "passed", [UNHINTED]: "passed" });
  }, 60_000);
});

describe("parseGoDuration", () => {
  it("reads what Go's time.ParseDuration reads, and nothing else", () => {
    expect(parseGoDuration("1h30m")).toBe(5_400_000);
    expect(parseGoDuration("1.5s")).toBe(1_500);
    expect(parseGoDuration("250ms")).toBe(250);
    expect(parseGoDuration("0")).toBe(0);
    expect(parseGoDuration("30")).toBeUndefined();
    expect(parseGoDuration("15 m")).toBeUndefined();
    expect(parseGoDuration("")).toBeUndefined();
  });
});
