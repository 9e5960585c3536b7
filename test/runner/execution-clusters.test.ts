import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { roundRobinClusters, type ExecutionCluster } from "../../src/runner/execution-cluster.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { executeRun } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { PROBE, probeKubeconfig, writeKubeconfigProbeBinary } from "../helpers/kubeconfig-probe-binary.ts";
import { eventually } from "../helpers/github-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let api: FakeKubeApi;
let probe: string;
const arch = hostArch();
const PAYLOAD_PR = `quay.io/netstress/pr-release@sha256:${"1".repeat(64)}`;
const PAYLOAD_BASE = `quay.io/openshift-release-dev/ocp-release@sha256:${"2".repeat(64)}`;

beforeAll(async () => {
  dir = await tempDir();
  api = await startFakeKubeApi();
  probe = await writeKubeconfigProbeBinary(dir.path, {
    slowMs: 1500,
    startedLog: join(dir.path, "slow-started"),
  });
});
afterAll(async () => {
  await api.stop();
  await dir.remove();
});

async function cluster(name: string, payload: string, lost?: AbortSignal): Promise<ExecutionCluster> {
  const kubeconfig = join(dir.path, `${name}.kubeconfig`);
  await writeFile(kubeconfig, probeKubeconfig(name, await readFile(api.kubeconfigPath, "utf8")), {
    mode: 0o600,
  });
  return { id: `test/${name}`, payload, kubeconfig, ...(lost ? { lost } : {}) };
}

const plan = (tests: string[]): ExecutionPlan => ({
  arch,
  arms: (["pr", "baseline"] as const).map((arm) => ({
    arm,
    components: [{ component: "probe", binary: probe, tests }],
  })),
});

async function readAll(path: string): Promise<ResultRecord[]> {
  const records: ResultRecord[] = [];
  for await (const r of readResultRecords(path)) records.push(r);
  return records;
}

const report = (r: ResultRecord) =>
  JSON.parse(r.output) as { kubeconfig: string; context: string; textInEnv: boolean };

describe("executions on clusters under test", () => {
  it("spread each arm's iterations round-robin over its clusters, KUBECONFIG a file, records naming cluster and payload", async () => {
    const clusters = roundRobinClusters({
      pr: [await cluster("pr-a", PAYLOAD_PR), await cluster("pr-b", PAYLOAD_PR)],
      baseline: [await cluster("base-a", PAYLOAD_BASE), await cluster("base-b", PAYLOAD_BASE)],
    });
    const { outcome, paths } = await executeRun({
      plan: plan([PROBE.reads]),
      outDir: join(dir.path, "spread"),
      iterations: 4,
      parallel: 4,
      seed: "spread",
      timeoutMs: 60_000,
      retries: 0,
      clusters,
      env: { PATH: process.env.PATH },
    });
    expect(outcome.status).toBe("completed");
    const records = await readAll(paths.results);
    expect(records).toHaveLength(8);
    for (const record of records) {
      const expected = `${record.arm === "pr" ? "pr" : "base"}-${record.iteration % 2 === 0 ? "a" : "b"}`;
      expect(record.result).toBe("passed");
      expect(record.cluster).toBe(`test/${expected}`);
      expect(record.payload).toBe(record.arm === "pr" ? PAYLOAD_PR : PAYLOAD_BASE);
      const seen = report(record);
      expect(seen.context).toBe(expected);
      expect(seen.kubeconfig).toBe(join(dir.path, `${expected}.kubeconfig`));
      expect(seen.textInEnv).toBe(false);
    }
  });

  it("reruns an execution whose cluster is lost under it on the arm's next cluster, and drops what it saw", async () => {
    const lost = new AbortController();
    const clusters = roundRobinClusters({
      pr: [await cluster("doomed", PAYLOAD_PR, lost.signal), await cluster("healthy", PAYLOAD_PR)],
      baseline: [await cluster("base", PAYLOAD_BASE)],
    });
    const running = executeRun({
      plan: plan([PROBE.slow]),
      outDir: join(dir.path, "lost"),
      iterations: 2,
      parallel: 4,
      seed: "lost",
      timeoutMs: 60_000,
      retries: 0,
      clusters,
      env: { PATH: process.env.PATH },
    });
    // Lost while its slow test runs on it: that execution's record must not count.
    const doomed = join(dir.path, "doomed.kubeconfig");
    await eventually(async () =>
      (await readFile(join(dir.path, "slow-started"), "utf8").catch(() => "")).split("\n").includes(doomed),
    );
    lost.abort("the cluster stopped answering");
    const { outcome, paths } = await running;
    expect(outcome.status).toBe("completed");
    const records = await readAll(paths.results);
    const pr = records.filter((r) => r.arm === "pr");
    expect(pr.map((r) => r.iteration).sort()).toEqual([0, 1]);
    // Iteration 0 was on the lost cluster: it ran again on the healthy one, and only that counts.
    expect(pr.every((r) => r.cluster === "test/healthy" && r.result === "passed")).toBe(true);
    expect(records.filter((r) => r.arm === "baseline")).toHaveLength(2);
  });

  it("fails the run, as infrastructure, when every cluster of an arm is lost", async () => {
    const lost = new AbortController();
    lost.abort("gone");
    const clusters = roundRobinClusters({
      pr: [await cluster("gone", PAYLOAD_PR, lost.signal)],
      baseline: [await cluster("base", PAYLOAD_BASE)],
    });
    await expect(
      executeRun({
        plan: plan([PROBE.reads]),
        outDir: join(dir.path, "all-lost"),
        iterations: 1,
        parallel: 2,
        seed: "all-lost",
        timeoutMs: 60_000,
        retries: 0,
        clusters,
        env: { PATH: process.env.PATH },
      }),
    ).rejects.toThrow(/no cluster of the pr arm is left: test\/gone lost/);
  });
});
