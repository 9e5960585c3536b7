import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ExecutionPlan } from "../../src/runner/execution-plan.ts";
import type { ResultRecord } from "../../src/runner/result-record.ts";
import type { ShardOutcome } from "../../src/runs/shard-executor.ts";
import { startFakeKubeApi, type FakeKubeApi, type KubeObject } from "../../src/sim/start-fake-kube-api.ts";
import {
  farmConfig,
  farmExecutor,
  RUNNER_IMAGE,
  shardOf,
  startFarmClusters,
  writeFarmImages,
} from "../farm/farm-fixture.ts";
import { PROBE, probeKubeconfig, writeKubeconfigProbeBinary } from "../helpers/kubeconfig-probe-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { testClusterProvider } from "../helpers/test-cluster-provider.ts";

const HONEST_IMAGE = "registry.test/ocp/probe-tests";
const HONEST_DIGEST = `sha256:${"1".repeat(64)}`;
const PR_IMAGE = "registry.test/pr/probe-tests";
const PR_DIGEST = `sha256:${"2".repeat(64)}`;
const PR_PAYLOAD = `registry.test/pr/release@sha256:${"e".repeat(64)}`;
const BASE_PAYLOAD = `registry.test/ocp/release@sha256:${"f".repeat(64)}`;
const FORGED_TEST = "[sig-network] a test only the forger knows";

/**
 * A PR's test binary that is honest about its own test (it fails) and then tries to own the
 * iteration's record stream: it looks up the runner among its ancestors, writes a complete stream
 * of its own into the runner's stdout (/proc/<runner>/fd/1) — the PR passing, the baseline failing,
 * a test that never ran — and reads every kubeconfig file it can find beside its own.
 */
function forgingBinary(): string {
  return `#!${process.execPath}
const { readFileSync, readdirSync, writeFileSync } = require("node:fs");
const { dirname, join } = require("node:path");
const [command, ...rest] = process.argv.slice(2);
const out = (line) => process.stdout.write(line + "\\n");
const name = ${JSON.stringify(PROBE.reads)};
if (command === "info") {
  out(JSON.stringify({ apiVersion: "v1.1", source: { commit: "${"0".repeat(40)}", build_date: "2026-01-01T00:00:00Z", git_tree_state: "clean" }, component: { product: "openshift", type: "payload", name: "probe" }, suites: [] }));
} else if (command === "list") {
  out(JSON.stringify({ name, labels: {}, resources: { isolation: {} }, source: "openshift:payload:probe", lifecycle: "blocking", environmentSelector: {} }));
} else if (command === "run-test") {
  const report = { wrote: [], read: [] };
  const record = (arm, test, result) => ({ name: test, lifecycle: "blocking", duration: 1, result, output: "", arm, arch: "amd64", iteration: 0, attempt: 0, component: "probe" });
  const forged = [record("pr", name, "passed"), record("baseline", name, "failed"), record("baseline", ${JSON.stringify(FORGED_TEST)}, "failed")]
    .map((r, i) => "@@netstress/v1 " + i + " " + JSON.stringify(r)).join("\\n") + "\\n@@netstress/v1 end 3 completed\\n";
  for (let pid = process.ppid; pid > 1; ) {
    try {
      if (readFileSync("/proc/" + pid + "/cmdline", "utf8").includes("--stream-records")) {
        writeFileSync("/proc/" + pid + "/fd/1", forged, { flag: "a" });
        report.wrote.push(pid);
      }
    } catch (e) { report.wrote.push(e.code); }
    try { pid = Number(readFileSync("/proc/" + pid + "/stat", "utf8").split(") ")[1].split(" ")[1]); } catch { break; }
  }
  const dir = dirname(process.env.KUBECONFIG || "/nonexistent/x");
  try { for (const f of readdirSync(dir)) { try { report.read.push(f + ":" + readFileSync(join(dir, f), "utf8")); } catch (e) { report.read.push(f + ":" + e.code); } } } catch (e) { report.read.push(e.code); }
  const stamp = (d) => d.toISOString().replace("T", " ").replace("Z", "000 UTC");
  const now = new Date();
  out(JSON.stringify({ name, lifecycle: "blocking", duration: 1, startTime: stamp(now), endTime: stamp(now), result: "failed", error: "the PR broke it", output: JSON.stringify(report) }));
} else {
  process.exit(2);
}
`;
}

let dir: { path: string; remove: () => Promise<void> };
let farmApi: FakeKubeApi;
let cut: FakeKubeApi;
const jobs: KubeObject[] = [];
const secrets: KubeObject[] = [];
let outcome: ShardOutcome;
let records: ResultRecord[] = [];
const kubeconfigOf = (id: string, base: string) => probeKubeconfig(id.replace("/", "-"), base);

beforeAll(async () => {
  dir = await tempDir();
  const images = await writeFarmImages(join(dir.path, "images"));
  const image = async (name: string, binary: Buffer) => {
    const rootfs = join(dir.path, "images", name);
    await mkdir(join(rootfs, "usr/bin"), { recursive: true });
    await writeFile(join(rootfs, "usr/bin/probe-tests-ext.gz"), gzipSync(binary));
    return { rootfs, commands: { cp: ["/bin/cp"] } };
  };
  const forger = join(dir.path, "forger");
  await writeFile(forger, forgingBinary());
  await chmod(forger, 0o755);
  [farmApi] = (await startFarmClusters({
    names: ["farm"],
    images: {
      [RUNNER_IMAGE]: images[RUNNER_IMAGE]!,
      [`${HONEST_IMAGE}@${HONEST_DIGEST}`]: await image(
        "honest",
        await readFile(await writeKubeconfigProbeBinary(dir.path)),
      ),
      [`${PR_IMAGE}@${PR_DIGEST}`]: await image("forger", await readFile(forger)),
    },
    maxRunning: 4,
  })) as [FakeKubeApi];
  cut = await startFakeKubeApi();
  const base = await readFile(cut.kubeconfigPath, "utf8");
  const provider = testClusterProvider({ kubeconfig: (id) => kubeconfigOf(id, base) });
  const signal = new AbortController().signal;
  const clusters = await provider.acquire({
    runId: "r",
    arch: "amd64",
    arms: [
      { arm: "pr", payload: PR_PAYLOAD },
      { arm: "baseline", payload: BASE_PAYLOAD },
    ],
    count: 1,
    signal,
  });
  const component = (image: string, digest: string) => ({
    component: "probe",
    binary: "/bot/probe-tests-ext.gz",
    image,
    digest,
    imagePath: "/usr/bin/probe-tests-ext.gz",
    tests: [PROBE.reads],
  });
  const plan: ExecutionPlan = {
    arch: "amd64",
    arms: [
      { arm: "pr", components: [{ ...component(PR_IMAGE, PR_DIGEST), source: "override" }] },
      { arm: "baseline", components: [{ ...component(HONEST_IMAGE, HONEST_DIGEST), source: "released" }] },
    ],
  };
  const off = farmApi.store.subscribe((e) => {
    if (e.type !== "ADDED") return;
    if (e.resource === "secrets") secrets.push(e.object);
    if (e.resource === "jobs") jobs.push(e.object);
  });
  const farm = farmExecutor(farmConfig([{ name: "farm", api: farmApi }]), inject("redisUrl"));
  try {
    outcome = await farm.executor.execute({
      shard: shardOf({ count: 1, plan }),
      outDir: join(dir.path, "out"),
      signal,
      clusters,
    });
    if (outcome.status !== "failed")
      records = (await readFile(outcome.resultsPath, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ResultRecord);
  } finally {
    off();
    await farm.close();
  }
}, 120_000);

afterAll(async () => {
  await Promise.all([farmApi?.stop(), cut?.stop()]);
  await dir?.remove();
});

describe("a PR's code inside a run", () => {
  it("runs in a pod that holds no credential of the baseline cluster", () => {
    const baselineContext = "test-baseline-";
    const prJobs = jobs.filter((j) => JSON.stringify(j).includes(PR_IMAGE));
    expect(prJobs.length).toBeGreaterThan(0);
    for (const job of prJobs) {
      const template = (
        job.spec as { template: { spec: { volumes?: { secret?: { secretName: string } }[] } } }
      ).template;
      const mounted = new Set(template.spec.volumes?.flatMap((v) => (v.secret ? [v.secret.secretName] : [])));
      const texts = secrets
        .filter((s) => mounted.has(s.metadata.name))
        .flatMap((s) => Object.values((s as { data?: Record<string, string> }).data ?? {}))
        .map((value) => Buffer.from(value, "base64").toString());
      expect(texts.length).toBeGreaterThan(0);
      for (const text of [...texts, JSON.stringify(job)]) expect(text).not.toContain(baselineContext);
    }
    // The binary looked beside its own kubeconfig and found its arm's alone.
    const pr = records.find((r) => r.arm === "pr")!;
    const seen = JSON.parse(pr.output) as { read: string[]; wrote: unknown[] };
    expect(seen.read.join("\n")).not.toContain(baselineContext);
    // It runs as another user than the runner: the runner's output is out of its reach.
    expect(seen.wrote).toEqual(["EACCES"]);
  });

  it("cannot make the collector take a forged record stream for the runner's", () => {
    // Either the run holds the real verdicts, or it says that its stream was tampered with.
    const said = outcome.status === "failed" ? outcome.reason : JSON.stringify(outcome);
    if (/tampered/.test(said)) return;
    expect(outcome.status).toBe("completed");
    expect(records.map((r) => [r.arm, r.name, r.result]).sort()).toEqual(
      [
        ["baseline", PROBE.reads, "passed"],
        ["pr", PROBE.reads, "failed"],
      ].sort(),
    );
    expect(records.find((r) => r.arm === "pr")!.error).toBe("the PR broke it");
  });
});
