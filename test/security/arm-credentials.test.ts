// Item: in a build-farm iteration both arms' kubeconfigs were in one Secret mounted into one pod,
// so a PR's test binary could read the baseline cluster's admin kubeconfig (and sabotage the
// baseline's tests, whose results feed the stream's history). Each arm now runs in a pod of its
// own that mounts its own cluster's kubeconfig only.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LABELS } from "@netstress/core/kube/netstress-labels.ts";
import { formatRecordLine, formatStreamTrailer } from "../../src/farm/record-stream.ts";
import type { FakeKubeApi, KubeObject } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { leaseBothArms, PR_PAYLOAD } from "../helpers/lease-both-arms.ts";
import { testClusterProvider } from "../helpers/test-cluster-provider.ts";
import {
  farmConfig,
  farmExecutor,
  PLAN,
  shardOf,
  runnerSigner,
  simulatedImages,
  simulatedRecords,
  simulatedRunner,
  startFarmClusters,
} from "../farm/farm-fixture.ts";

/** Each cluster under test's admin credential: its token names its cluster. */
const tokenOf = (id: string) => `admin-token-of-${id.replace("/", "-")}`;
const kubeconfigOf = (id: string) =>
  [
    "apiVersion: v1",
    "kind: Config",
    `clusters: [{ name: c, cluster: { server: "https://${id.replace("/", "-")}.test:6443" } }]`,
    `users: [{ name: u, user: { token: ${tokenOf(id)} } }]`,
    "contexts: [{ name: c, context: { cluster: c, user: u } }]",
    "current-context: c",
    "",
  ].join("\n");

let farmApi: FakeKubeApi;
let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
  [farmApi] = (await startFarmClusters({
    names: ["farm"],
    images: simulatedImages(simulatedRunner({ delayMs: 50 })),
    maxRunning: 4,
  })) as [FakeKubeApi];
});
afterAll(async () => {
  await farmApi?.stop();
  await dir.remove();
});

interface PodSpecSeen {
  volumes?: { secret?: { secretName: string; items?: { key: string }[] } }[];
  containers: {
    env?: { value?: string; valueFrom?: { secretKeyRef?: { name: string } } }[];
    args?: string[];
  }[];
  initContainers?: PodSpecSeen["containers"];
}

describe("a PR run's iteration on the build farm", () => {
  it("gives the PR arm's pod no credential of the baseline arm's cluster", async () => {
    const provider = testClusterProvider({ kubeconfig: kubeconfigOf });
    const signal = new AbortController().signal;
    const { pr, baseline } = await leaseBothArms(provider, { runId: "r", count: 1 });
    // Every version of every Job and Secret the farm's API server received.
    const jobs: KubeObject[] = [];
    const secrets = new Map<string, KubeObject[]>();
    const off = farmApi.store.subscribe((e) => {
      if (e.resource === "jobs" && e.type === "ADDED") jobs.push(e.object);
      if (e.resource === "secrets" && e.type !== "DELETED")
        secrets.set(e.object.metadata.name, [...(secrets.get(e.object.metadata.name) ?? []), e.object]);
    });
    const farm = farmExecutor(farmConfig([{ name: "farm", api: farmApi }]), inject("redisUrl"));
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 2, plan: PLAN }),
        outDir: join(dir.path, "isolated"),
        signal,
        clusters: { pr, baseline },
      });
      // Arms in pods and on clusters of their own: the baseline arm may feed the stream's history.
      expect(outcome).toMatchObject({ status: "completed", records: 8, armsIsolated: true });
    } finally {
      off();
      await farm.close();
    }
    const baselineTokens = baseline.map((l) => tokenOf(l.cluster.id));
    const prJobs = jobs.filter((j) => j.metadata.labels?.[LABELS.arms] !== "baseline");
    expect(prJobs.length).toBeGreaterThan(0);
    for (const job of prJobs) {
      const pod = (job.spec as { template: { spec: PodSpecSeen } }).template.spec;
      // What the pod can read: its Job's own text (env, args, annotations) and the Secrets it mounts
      // or reads variables from, in every version the server held.
      const mounted = [
        ...(pod.volumes ?? []).flatMap((v) => (v.secret ? [v.secret.secretName] : [])),
        ...[...pod.containers, ...(pod.initContainers ?? [])].flatMap((c) =>
          (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])),
        ),
      ];
      const readable = [
        JSON.stringify(job),
        ...mounted.flatMap((name) =>
          (secrets.get(name) ?? []).flatMap((s) =>
            Object.values((s as { data?: Record<string, string> }).data ?? {}).map((value) =>
              Buffer.from(value, "base64").toString("utf8"),
            ),
          ),
        ),
      ].join("\n");
      expect(mounted.length, `${job.metadata.name} mounts its own cluster's kubeconfig`).toBeGreaterThan(0);
      expect(readable).toContain(tokenOf(pr[0]!.cluster.id));
      for (const token of baselineTokens) expect(readable, job.metadata.name).not.toContain(token);
    }
  });

  it("says a PR pod's stream was tampered with when it holds results of the baseline arm, and takes none of them", async () => {
    // The PR's binary writes a complete stream of both arms into its runner's output: the baseline
    // failing everything, to plant a flaky history. Signed as the runner signs: should a binary ever
    // get hold of its pod's stream key, a pod still speaks for its own arm only.
    const forging = simulatedImages({
      simulate: async ({ args, pod }) => {
        const records = simulatedRecords(0).map((r) =>
          r.arm === "baseline" && pod.labels[LABELS.arms] === "pr" ? { ...r, result: "failed" as const } : r,
        );
        const mine = pod.labels[LABELS.arms] === "pr" ? records : records.filter((r) => r.arm === "baseline");
        return {
          stdout: (await runnerSigner(args))([
            ...mine.map((r, i) => formatRecordLine(i, r)),
            formatStreamTrailer(mine.length, "completed"),
          ]),
          exitCode: 0,
        };
      },
    });
    const [hostile] = (await startFarmClusters({ names: ["hostile"], images: forging })) as [FakeKubeApi];
    const provider = testClusterProvider({ kubeconfig: kubeconfigOf });
    const signal = new AbortController().signal;
    const { pr, baseline } = await leaseBothArms(provider, { runId: "forged", count: 1 });
    const farm = farmExecutor(farmConfig([{ name: "hostile", api: hostile }]), inject("redisUrl"));
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 1, plan: PLAN }),
        outDir: join(dir.path, "forged"),
        signal,
        clusters: { pr, baseline },
      });
      expect(outcome).toMatchObject({
        status: "failed",
        reason: expect.stringMatching(/tampered with: it holds results of the baseline arm/) as string,
      });
    } finally {
      await farm.close();
      await hostile.stop();
    }
  });

  it("does not count as isolated when both arms share a pod or a cluster", async () => {
    const provider = testClusterProvider({ kubeconfig: kubeconfigOf });
    const signal = new AbortController().signal;
    const { pr = [] } = await provider.acquire({
      runId: "shared",
      arch: "amd64",
      arms: [{ arm: "pr", payload: PR_PAYLOAD }],
      count: 1,
      signal,
    });
    const farm = farmExecutor(farmConfig([{ name: "farm", api: farmApi }]), inject("redisUrl"));
    try {
      // An adaptive run's shared clusters (both arms on one cluster), then one configured cluster.
      for (const [name, clusters] of [
        ["shared", { pr, baseline: pr }],
        ["configured", undefined],
      ] as const) {
        const outcome = await farm.executor.execute({
          shard: shardOf({ count: 1, plan: PLAN }),
          outDir: join(dir.path, name),
          signal,
          ...(clusters ? { clusters } : {}),
        });
        expect(outcome).toMatchObject({ status: "completed", records: 4 });
        expect(outcome).not.toHaveProperty("armsIsolated");
      }
    } finally {
      await farm.close();
    }
  });
});
