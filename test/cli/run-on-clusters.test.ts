import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSampleBinaries,
  type SampleBinaries,
} from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import {
  ovnKubernetesPr,
  ovnKubernetesReleased,
  REGRESSED_TEST,
} from "@netstress/testbed/sample-ext/suites.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import {
  startSimulatedCluster,
  type SimulatedCluster,
} from "@netstress/testbed/sim/start-simulated-cluster.ts";
import { runNetstress } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const image = (c: string) => `quay.io/netstress-sample/release-images@sha256:${c.repeat(64)}`;
const RELEASED = `quay.io/netstress-sample/release@sha256:${"1".repeat(64)}`;
const PR = `quay.io/netstress-sample/pr-release@sha256:${"2".repeat(64)}`;

let dir: Awaited<ReturnType<typeof tempDir>>;
let binaries: SampleBinaries;
let clusters: SimulatedCluster[];

beforeAll(async () => {
  dir = await tempDir("run-on-clusters-");
  binaries = await buildSampleBinaries({ outDir: dir.path });
  const start = (payload: string, commit: string, c: string) =>
    startSimulatedCluster({
      arch: hostArch(),
      payload,
      components: { "ovn-kubernetes": { commit, image: image(c) } },
    });
  clusters = await Promise.all([
    start(PR, ovnKubernetesPr.commit, "b"),
    start(PR, ovnKubernetesPr.commit, "b"),
    start(RELEASED, ovnKubernetesReleased.commit, "a"),
  ]);
});
afterAll(async () => {
  await Promise.all((clusters ?? []).map((c) => c.stop()));
  await dir?.remove();
});

describe("netstress run --pr-cluster/--baseline-cluster", () => {
  it("runs each arm on its own clusters, records name cluster and payload, and the PR build in the cluster is what regresses", async () => {
    const [prA, prB, base] = clusters as [SimulatedCluster, SimulatedCluster, SimulatedCluster];
    const out = join(dir.path, "out");
    const released = binaries.released["ovn-kubernetes"];
    const result = await runNetstress(
      [
        "run",
        `--binary=ovn-kubernetes=${released}`,
        `--baseline-binary=ovn-kubernetes=${released}`,
        `--pr-cluster=${prA.kubeconfigPath}`,
        `--pr-cluster=${prB.kubeconfigPath}`,
        `--baseline-cluster=${base.kubeconfigPath}`,
        "--iterations=12",
        "--parallel=6",
        "--retries=0",
        "--seed=clusters",
        `--out=${out}`,
      ],
      {
        env: {
          PATH: process.env.PATH ?? "",
          SAMPLE_EXT_SEED: "cli-clusters",
          SAMPLE_EXT_TIME_SCALE: "0",
          NETSTRESS_BINARY_ENV: "SAMPLE_EXT_SEED,SAMPLE_EXT_TIME_SCALE",
        },
      },
    );
    expect(result.stderr).toMatch(
      /pr arm on kubeconfig\/\S+ .*running quay\.io\/netstress-sample\/pr-release@sha256:2+/,
    );
    const records = (await readFile(join(out, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ResultRecord);
    const prClusters = new Set(records.filter((r) => r.arm === "pr").map((r) => r.cluster));
    const baseClusters = new Set(records.filter((r) => r.arm === "baseline").map((r) => r.cluster));
    expect(prClusters.size).toBe(2);
    expect(baseClusters.size).toBe(1);
    expect([...prClusters].some((c) => baseClusters.has(c))).toBe(false);
    expect(records.every((r) => r.payload === (r.arm === "pr" ? PR : RELEASED))).toBe(true);
    // The same test binary in both arms: the PR arm's clusters, running the PR build, fail NodePort
    // far more often than the released build's rare flake.
    const nodePortFailures = (arm: string) =>
      records.filter((r) => r.arm === arm && r.name === REGRESSED_TEST && r.result === "failed").length;
    expect(nodePortFailures("pr")).toBeGreaterThanOrEqual(3 + nodePortFailures("baseline"));
    expect(result.stdout).toMatch(/regression/i);
    expect(result.code).toBe(1);
  });

  it("refuses a run whose baseline arm has no clusters, and one cluster for both arms", async () => {
    const [prA] = clusters as [SimulatedCluster];
    const released = binaries.released["ovn-kubernetes"];
    const common = [`--binary=ovn-kubernetes=${released}`, `--baseline-binary=ovn-kubernetes=${released}`];
    const missing = await runNetstress(["run", ...common, `--pr-cluster=${prA.kubeconfigPath}`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("the baseline arm needs its own clusters too: give --baseline-cluster");
    const both = await runNetstress([
      "run",
      ...common,
      `--pr-cluster=${prA.kubeconfigPath}`,
      `--baseline-cluster=${prA.kubeconfigPath}`,
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("is given for both arms: the PR arm's clusters are never the baseline's");
  });
});
