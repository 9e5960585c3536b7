import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import {
  AWS_ONLY_TEST,
  CONFLICTING_TESTS,
  DETAILED_TEST,
  DISRUPTIVE_TEST,
  EXCLUSIVE_TEST,
  NOT_ON_OVN_TEST,
  SERIAL_TEST,
  isolationSample,
} from "@netstress/testbed/sample-ext/suites.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { parseOteTimestamp } from "../../src/ote/parse-ote-timestamp.ts";
import type { ExecutionPlan, TestSelection } from "@netstress/core/model/execution-plan.ts";
import { executeRun } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { runManifestSchema } from "../../src/runner/run-manifest.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;
const arch = hostArch();
const env = { ...process.env, SAMPLE_EXT_SEED: "isolation", KUBECONFIG: "" };

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeSampleBinary({ suite: isolationSample, path: join(dir.path, "cno-tests-ext") });
});
afterAll(() => dir.remove());

const plan = (selection?: TestSelection): ExecutionPlan => ({
  arch,
  ...(selection ? { selection } : {}),
  arms: (["pr", "baseline"] as const).map((arm) => ({
    arm,
    components: [{ component: "cluster-network-operator", binary }],
  })),
});

async function run(name: string, selection: TestSelection | undefined, iterations = 1) {
  const outDir = join(dir.path, name);
  const { paths } = await executeRun({
    plan: plan(selection),
    outDir,
    iterations,
    parallel: 8,
    seed: name,
    timeoutMs: 60_000,
    retries: 0,
    env,
  });
  const records: ResultRecord[] = [];
  for await (const r of readResultRecords(paths.results)) records.push(r);
  const manifest = runManifestSchema.parse(JSON.parse(await readFile(paths.manifest, "utf8")));
  return { records, manifest, outDir };
}

const interval = (r: ResultRecord) => {
  const start = parseOteTimestamp(r.startTime!)!.getTime();
  const end = parseOteTimestamp(r.endTime!)!.getTime();
  return { start, end };
};
const overlap = (a: ResultRecord, b: ResultRecord) => {
  const x = interval(a);
  const y = interval(b);
  return x.start < y.end && y.start < x.end;
};

describe("isolation-aware runs of the sample binaries", () => {
  it('runs [Serial], [Disruptive] and conflict-"*" tests alone in both arms at parallelism 8, while the others overlap', async () => {
    const { records, manifest } = await run("alone", { includeDisruptive: true }, 3);
    const lone = [SERIAL_TEST, DISRUPTIVE_TEST, EXCLUSIVE_TEST];
    // 12 tests run without an environment (AWS-only and not-on-OVN included), in 2 arms × 3 iterations.
    expect(records).toHaveLength(14 * 2 * 3);
    const alone = records.filter((r) => lone.includes(r.name));
    expect(alone).toHaveLength(3 * 2 * 3);
    expect(new Set(alone.map((r) => r.ranAlone))).toEqual(new Set(["serial", "disruptive", "isolation"]));
    for (const a of alone) {
      const overlapping = records.filter((r) => r !== a && overlap(a, r));
      expect(
        overlapping.map((r) => `${r.arm} ${r.name}`),
        `${a.arm} ${a.name}`,
      ).toEqual([]);
    }
    const conflicting = records.filter((r) => (CONFLICTING_TESTS as readonly string[]).includes(r.name));
    expect(conflicting).toHaveLength(2 * 2 * 3);
    for (const a of conflicting) {
      expect(conflicting.filter((b) => b !== a && overlap(a, b))).toEqual([]);
    }
    const parallel = records.filter((r) => !lone.includes(r.name));
    const overlappingPairs = parallel.flatMap((a, i) =>
      parallel.slice(i + 1).flatMap((b) => (overlap(a, b) ? [[a, b] as const] : [])),
    );
    expect(overlappingPairs.length).toBeGreaterThan(10);
    // The arms still share the cluster: PR and baseline executions overlap each other.
    expect(overlappingPairs.some(([a, b]) => a.arm !== b.arm)).toBe(true);
    const component = manifest.components.find((c) => c.arm === "pr")!;
    expect(component.alone).toEqual(
      expect.arrayContaining([
        { name: SERIAL_TEST, reason: "serial" },
        { name: DISRUPTIVE_TEST, reason: "disruptive" },
        { name: EXCLUSIVE_TEST, reason: "isolation" },
      ]),
    );
  }, 120_000);

  it("selects a suite by the binaries' own definitions, parents included, and leaves [Disruptive] tests out unless asked", async () => {
    const { records, manifest } = await run("suite", { suite: "openshift/conformance/parallel" });
    const names = new Set(records.map((r) => r.name));
    expect(names.size).toBe(11);
    for (const left of [SERIAL_TEST, DISRUPTIVE_TEST, EXCLUSIVE_TEST]) expect(names).not.toContain(left);
    expect(manifest.suite).toBe("openshift/conformance/parallel");
    expect(manifest.components[0]!.excluded).toEqual({ environment: 0, suite: 3, disruptive: 0, focus: 0 });

    const serial = await run("serial-suite", { suite: "openshift/conformance/serial" });
    expect(new Set(serial.records.map((r) => r.name))).toEqual(new Set([SERIAL_TEST]));
  }, 60_000);

  it("gives the environment to list, honours environmentSelectors, keeps details[] and collects artifacts", async () => {
    const { records, manifest, outDir } = await run("environment", {
      environment: { platform: "aws", network: "ovn" },
    });
    const names = new Set(records.map((r) => r.name));
    expect(names).toContain(AWS_ONLY_TEST);
    expect(names).not.toContain(NOT_ON_OVN_TEST);
    expect(names).not.toContain(DISRUPTIVE_TEST);
    expect(names.size).toBe(12);
    expect(manifest).toMatchObject({
      environment: { platform: "aws", network: "ovn" },
      environmentSource: "flags",
    });
    expect(manifest.components[0]!.excluded?.disruptive).toBe(1);

    const detailed = records.find((r) => r.name === DETAILED_TEST);
    expect(detailed?.details).toEqual([{ name: "nodes-checked", value: 6 }]);
    for (const arm of ["pr", "baseline"] as const) {
      const artifacts = manifest.components.find((c) => c.arm === arm)!.artifacts!;
      expect(artifacts.dir).toBe(join("artifacts", arm, "cluster-network-operator"));
      expect(artifacts.files).toHaveLength(1);
      const text = await readFile(join(outDir, artifacts.files[0]!.path), "utf8");
      expect(text).toBe(`${DETAILED_TEST}\n`);
    }

    const gcp = await run("gcp", { environment: { platform: "gcp" } });
    expect(gcp.records.map((r) => r.name)).not.toContain(AWS_ONLY_TEST);
  }, 60_000);

  it("says which suites exist when asked for an unknown one, and how to run only [Disruptive] tests", async () => {
    await expect(run("unknown-suite", { suite: "openshift/no-such-suite" })).rejects.toThrow(
      /no binary of the plan advertises the suite "openshift\/no-such-suite"; known suites: .*openshift\/conformance\/parallel/,
    );
    await expect(run("disruptive-only", { suite: "openshift/disruptive" })).rejects.toThrow(
      /\[Disruptive\] \(run them with --include-disruptive\)/,
    );
  }, 60_000);
});
