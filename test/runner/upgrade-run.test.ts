import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { UPGRADE_TEST, upgradeSample } from "@netstress/testbed/sample-ext/suites.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { roundRobinClusters, type ExecutionCluster } from "../../src/runner/execution-cluster.ts";
import { executeRun } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let api: FakeKubeApi;
let binary: string;
const arch = hostArch();
const FROM = `quay.io/openshift-release-dev/ocp-release@sha256:${"0".repeat(64)}`;
const TARGET = {
  pr: `quay.io/netstress/pr-release@sha256:${"1".repeat(64)}`,
  baseline: `quay.io/openshift-release-dev/ocp-release@sha256:${"2".repeat(64)}`,
};

beforeAll(async () => {
  dir = await tempDir();
  api = await startFakeKubeApi();
  binary = await writeSampleBinary({ suite: upgradeSample, path: join(dir.path, "upgrade-tests-ext") });
});
afterAll(async () => {
  await api.stop();
  await dir.remove();
});

async function readAll(path: string): Promise<ResultRecord[]> {
  const records: ResultRecord[] = [];
  for await (const r of readResultRecords(path)) records.push(r);
  return records;
}

describe("[Upgrade] tests", () => {
  it("get their arm's target and upgrade each cluster once; later iterations on it are skipped with the reason", async () => {
    const cluster = (name: string): ExecutionCluster => ({
      id: `test/${name}`,
      payload: FROM,
      kubeconfig: api.kubeconfigPath,
    });
    const { outcome, paths } = await executeRun({
      plan: {
        arch,
        selection: { includeDisruptive: true },
        arms: (["pr", "baseline"] as const).map((arm) => ({
          arm,
          components: [{ component: upgradeSample.component, binary }],
          upgradeTarget: TARGET[arm],
        })),
      },
      clusters: roundRobinClusters({
        pr: [cluster("pr-a"), cluster("pr-b")],
        baseline: [cluster("base-a"), cluster("base-b")],
      }),
      outDir: join(dir.path, "once"),
      iterations: 4,
      parallel: 4,
      seed: "once",
      timeoutMs: 60_000,
      retries: 2,
      // The runner's own environment names no target for an arm: the plan does.
      env: { PATH: process.env.PATH, SAMPLE_EXT_SEED: "once", NETSTRESS_UPGRADE_TARGET: "quay.io/wrong" },
    });
    expect(outcome.status).toBe("completed");
    const records = await readAll(paths.results);
    const upgrades = records.filter((r) => r.name === UPGRADE_TEST);
    // One record per arm and iteration: an upgrade is never retried.
    expect(upgrades).toHaveLength(8);
    for (const arm of ["pr", "baseline"] as const) {
      for (let iteration = 0; iteration < 4; iteration++) {
        const record = upgrades.find((r) => r.arm === arm && r.iteration === iteration)!;
        expect(record).toMatchObject({ attempt: 0, ranAlone: "disruptive" });
        if (iteration < 2) {
          expect(record.result).toBe("passed");
          expect(record.output).toContain(`upgraded the cluster to ${TARGET[arm]}`);
        } else {
          expect(record.result).toBe("skipped");
          expect(record.output).toBe(
            `skipped: the cluster under test runs the upgrade target already (this test upgraded it in iteration ${iteration - 2}); an upgrade test runs once per cluster in a run`,
          );
        }
      }
    }
    // The other tests run in every iteration.
    expect(records.filter((r) => r.name !== UPGRADE_TEST && r.result === "passed")).toHaveLength(8);
  });

  it("without a target for the arm skip themselves in every iteration, leaving the cluster to the next", async () => {
    const { paths } = await executeRun({
      plan: {
        arch,
        selection: { includeDisruptive: true },
        arms: [
          { arm: "pr", components: [{ component: upgradeSample.component, binary, tests: [UPGRADE_TEST] }] },
        ],
      },
      clusterLabel: "test/shared",
      outDir: join(dir.path, "no-target"),
      iterations: 2,
      parallel: 1,
      seed: "no-target",
      timeoutMs: 60_000,
      retries: 0,
      env: { PATH: process.env.PATH, NETSTRESS_UPGRADE_TARGET: "quay.io/wrong" },
    });
    const records = await readAll(paths.results);
    expect(records).toHaveLength(2);
    for (const record of records) {
      expect(record.result).toBe("skipped");
      expect(record.output).toContain("NETSTRESS_UPGRADE_TARGET is not set");
    }
  });
});
