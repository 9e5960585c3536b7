import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import pLimit from "p-limit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildSampleBinaries,
  type SampleBinaries,
} from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import {
  NEW_TEST,
  ovnKubernetesPr,
  ovnKubernetesReleased,
  REGRESSED_TEST,
} from "@netstress/testbed/sample-ext/suites.ts";
import {
  startSimulatedCluster,
  type SimulatedCluster,
} from "@netstress/testbed/sim/start-simulated-cluster.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const run = promisify(execFile);
const ITERATIONS = 16;
const image = (c: string) => `quay.io/netstress-sample/release-images@sha256:${c.repeat(64)}`;

let dir: Awaited<ReturnType<typeof tempDir>>;
let binaries: SampleBinaries;
let releasedCluster: SimulatedCluster;
let prCluster: SimulatedCluster;

beforeAll(async () => {
  dir = await tempDir("sample-cluster-");
  binaries = await buildSampleBinaries({ outDir: dir.path });
  const cluster = (payload: string, build: { commit: string; image: string }) =>
    startSimulatedCluster({ arch: "amd64", payload, components: { "ovn-kubernetes": build } });
  [releasedCluster, prCluster] = await Promise.all([
    cluster(image("1"), { commit: ovnKubernetesReleased.commit, image: image("a") }),
    cluster(image("2"), { commit: ovnKubernetesPr.commit, image: image("b") }),
  ]);
});

afterAll(async () => {
  await Promise.all([releasedCluster?.stop(), prCluster?.stop()]);
  await dir?.remove();
});

const limit = pLimit(4);

/** The outcome of one test in each iteration: the binary run as the runner runs it. */
async function outcomes(
  binary: string,
  test: string,
  kubeconfig: string | undefined,
  iterations = ITERATIONS,
) {
  return Promise.all(
    Array.from({ length: iterations }, (_, i) =>
      limit(async () => {
        const { stdout } = await run(process.execPath, [binary, "run-test", "-n", test, "-o", "jsonl"], {
          encoding: "utf8",
          env: {
            PATH: process.env.PATH ?? "",
            SAMPLE_EXT_SEED: "cluster-builds",
            SAMPLE_EXT_TIME_SCALE: "0",
            NETSTRESS_ITERATION: String(i),
            NETSTRESS_ARM: "pr",
            ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
          },
          timeout: 60_000,
        });
        const result = stdout
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as { result: string; error?: string })[0]!;
        return result;
      }),
    ),
  );
}
const failures = (results: { result: string }[]) => results.filter((r) => r.result === "failed").length;
const pattern = (results: { result: string }[]) => results.map((r) => r.result).join(",");

describe("the sample test binaries against their cluster under test", () => {
  it("fail the NodePort test as the cluster's ovn-kubernetes build makes it, whichever binary runs it", async () => {
    const released = binaries.released["ovn-kubernetes"];
    const pr = binaries.pr["ovn-kubernetes"];
    const [releasedOnPr, prOnPr, releasedOnReleased, prOnReleased, prAlone, releasedAlone] =
      await Promise.all([
        outcomes(released, REGRESSED_TEST, prCluster.kubeconfigPath),
        outcomes(pr, REGRESSED_TEST, prCluster.kubeconfigPath),
        outcomes(released, REGRESSED_TEST, releasedCluster.kubeconfigPath),
        outcomes(pr, REGRESSED_TEST, releasedCluster.kubeconfigPath),
        outcomes(pr, REGRESSED_TEST, undefined),
        outcomes(released, REGRESSED_TEST, undefined),
      ]);
    // The PR build in the cluster decides, not the binary: both binaries fail in the same iterations.
    expect(pattern(releasedOnPr)).toBe(pattern(prOnPr));
    expect(pattern(prOnReleased)).toBe(pattern(releasedOnReleased));
    expect(failures(prOnPr)).toBeGreaterThanOrEqual(ITERATIONS / 4);
    expect(failures(prOnReleased)).toBeLessThanOrEqual(2);
    expect(releasedOnPr.find((r) => r.result === "failed")?.error).toMatch(/NodePort 31080/);
    // Without a cluster, a binary behaves as if the cluster ran its own build (the demo of today).
    expect(pattern(prAlone)).toBe(pattern(prOnPr));
    expect(pattern(releasedAlone)).toBe(pattern(releasedOnReleased));
  });

  it("a PR that only adds a test changes nothing else: the released tests behave as released, the new one runs", async () => {
    const pr = binaries.pr["ovn-kubernetes"];
    const released = binaries.released["ovn-kubernetes"];
    const podToService = ovnKubernetesReleased.tests.find((t) => t.name.includes("pod-to-service"))!.name;
    const [prRun, releasedRun, added] = await Promise.all([
      outcomes(pr, podToService, releasedCluster.kubeconfigPath, 8),
      outcomes(released, podToService, releasedCluster.kubeconfigPath, 8),
      outcomes(pr, NEW_TEST, releasedCluster.kubeconfigPath, 1),
    ]);
    expect(pattern(prRun)).toBe(pattern(releasedRun));
    expect(["passed", "failed"]).toContain(added[0]!.result);
    await expect(
      run(process.execPath, [released, "run-test", "-n", NEW_TEST], { encoding: "utf8" }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining("no test named") });
  });

  it("fail every test they run on a cluster they cannot reach, naming it", async () => {
    const lost = await startSimulatedCluster({
      arch: "amd64",
      payload: image("3"),
      components: { "ovn-kubernetes": { commit: ovnKubernetesReleased.commit, image: image("a") } },
    });
    const kubeconfig = `${dir.path}/lost.kubeconfig`;
    await writeFile(kubeconfig, lost.kubeconfig);
    await lost.stop();
    const [result] = await outcomes(binaries.released["ovn-kubernetes"], REGRESSED_TEST, kubeconfig, 1);
    expect(result).toMatchObject({ result: "failed" });
    expect(result!.error).toContain(`cannot reach the cluster under test at ${lost.url}`);
  });
});
