import { mkdir, readFile, writeFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { ClusterLease } from "../../src/runs/clusters-under-test.ts";
import { jobSecretName } from "../../src/farm/build-job-secret.ts";
import { jobName } from "../../src/farm/job-identity.ts";
import {
  startFakeKubeApi,
  type FakeKubeApi,
  type KubeObject,
} from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { PROBE, probeKubeconfig, writeKubeconfigProbeBinary } from "../helpers/kubeconfig-probe-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { BASE_PAYLOAD, leaseBothArms, PR_PAYLOAD } from "../helpers/lease-both-arms.ts";
import { testClusterProvider, type TestClusterProvider } from "../helpers/test-cluster-provider.ts";
import {
  farmConfig,
  farmExecutor,
  RUNNER_IMAGE,
  shardOf,
  startFarmClusters,
  writeFarmImages,
} from "./farm-fixture.ts";

const PROBE_IMAGE = "registry.test/probe/tests";
const PROBE_DIGEST = `sha256:${"d".repeat(64)}`;

let dir: { path: string; remove: () => Promise<void> };
let farmApi: FakeKubeApi;
let cut: FakeKubeApi;
let cutKubeconfig: string;

beforeAll(async () => {
  dir = await tempDir();
  const images = await writeFarmImages(join(dir.path, "images"));
  const rootfs = join(dir.path, "images", "probe");
  await mkdir(join(rootfs, "usr/bin"), { recursive: true });
  // Component images ship their test binary gzipped.
  const probe = await readFile(await writeKubeconfigProbeBinary(dir.path, { slowMs: 4000 }));
  await writeFile(join(rootfs, "usr/bin/probe-tests-ext.gz"), gzipSync(probe));
  [farmApi] = (await startFarmClusters({
    names: ["farm"],
    images: {
      ...images,
      [RUNNER_IMAGE]: images[RUNNER_IMAGE]!,
      [`${PROBE_IMAGE}@${PROBE_DIGEST}`]: { rootfs, commands: { cp: ["/bin/cp"] } },
    },
    maxRunning: 4,
  })) as [FakeKubeApi];
  // The clusters under test answer the runner's environment discovery.
  cut = await startFakeKubeApi();
  cutKubeconfig = await readFile(cut.kubeconfigPath, "utf8");
});
afterAll(async () => {
  await Promise.all([farmApi?.stop(), cut?.stop()]);
  await dir.remove();
});

const plan = (test: string): ExecutionPlan => ({
  arch: "amd64",
  arms: (["pr", "baseline"] as const).map((arm) => ({
    arm,
    components: [
      {
        component: "probe",
        binary: "/bot/probe-tests-ext.gz",
        image: PROBE_IMAGE,
        digest: PROBE_DIGEST,
        imagePath: "/usr/bin/probe-tests-ext.gz",
        tests: [test],
      },
    ],
  })),
});

const leases = (provider: TestClusterProvider) => leaseBothArms(provider, { runId: "r", count: 2 });

const readResults = async (path: string): Promise<ResultRecord[]> =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ResultRecord);

const secretsIn = (api: FakeKubeApi) => api.store.list("secrets", "netstress", () => true).items;

describe("the farm executor over clusters under test", () => {
  it("runs each arm of an iteration in a pod of its own, its cluster's kubeconfig mounted from the Job's Secret, and deletes the Secret with the Job", async () => {
    const provider = testClusterProvider({
      kubeconfig: (id) => probeKubeconfig(id.replace("/", "-"), cutKubeconfig),
    });
    const byArm = await leases(provider);
    const farm = farmExecutor(farmConfig([{ name: "farm", api: farmApi }]), inject("redisUrl"));
    const secrets: KubeObject[] = [];
    const jobs: KubeObject[] = [];
    const owners = new Set<string>();
    /** Each Job's Secret was there when its Job was created. */
    const secretFirst: boolean[] = [];
    const off = farmApi.store.subscribe((e) => {
      if (e.resource === "secrets")
        for (const o of e.object.metadata.ownerReferences ?? []) owners.add(`${o.kind}/${o.name}`);
      if (e.type !== "ADDED") return;
      if (e.resource === "secrets") secrets.push(e.object);
      if (e.resource === "jobs") {
        jobs.push(e.object);
        secretFirst.push(secrets.some((s) => s.metadata.name === jobSecretName(e.object.metadata.name)));
      }
    });
    const before = new Map(farmApi.stats.calls);
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 2, plan: plan(PROBE.reads) }),
        outDir: join(dir.path, "mounted"),
        signal: new AbortController().signal,
        clusters: byArm,
      });
      if (outcome.status === "failed") throw new Error(outcome.reason);
      expect(outcome).toMatchObject({ status: "completed", records: 4 });
      if (outcome.status !== "completed") return;
      const records = await readResults(outcome.resultsPath);
      for (const r of records) {
        const id = `test/${r.arm}-${(r.arm === "pr" ? 0 : 2) + (r.iteration % 2)}`;
        expect(r).toMatchObject({
          result: "passed",
          cluster: id,
          payload: r.arm === "pr" ? PR_PAYLOAD : BASE_PAYLOAD,
        });
        const seen = JSON.parse(r.output) as { context: string; textInEnv: boolean; kubeconfig: string };
        expect(seen.context).toBe(id.replace("/", "-"));
        expect(seen.textInEnv).toBe(false);
        expect(seen.kubeconfig.endsWith(`/${r.arm}`)).toBe(true);
      }
      // One Job per iteration and arm, each with a Secret of the bot's holding its own arm's
      // kubeconfig, made before the Job; all gone with their Jobs.
      expect(jobs.map((j) => j.metadata.labels?.["netstress.io/arms"]).sort()).toEqual([
        "baseline",
        "baseline",
        "pr",
        "pr",
      ]);
      expect(secrets).toHaveLength(4);
      for (const secret of secrets) {
        const arm = secret.metadata.labels?.["netstress.io/arms"];
        expect(secret.metadata.labels).toMatchObject({ "app.kubernetes.io/managed-by": "netstress" });
        expect(Object.keys((secret as { data?: object }).data ?? {})).toEqual(["stream-key", arm]);
      }
      expect(secretFirst).toEqual([true, true, true, true]);
      // Each Secret is owned by its Job, for the garbage collector to take with it.
      expect([...owners].sort()).toEqual(jobs.map((j) => `Job/${j.metadata.name}`).sort());
      await expect.poll(() => secretsIn(farmApi)).toHaveLength(0);
      // Per attempt: create and delete the Job, create, own and delete its Secret, read the pod log.
      const calls = (key: string) => (farmApi.stats.calls.get(key) ?? 0) - (before.get(key) ?? 0);
      expect(
        ["POST jobs", "POST secrets", "PUT secrets", "DELETE secrets", "DELETE jobs", "GET pods/log"].map(
          calls,
        ),
      ).toEqual([4, 4, 4, 4, 4, 4]);
      // The Jobs carry no kubeconfig text: not in their env, args or the plan annotation.
      const token = /token: (\S+)/.exec(cutKubeconfig)![1]!;
      for (const job of jobs) expect(JSON.stringify(job)).not.toContain(token);
    } finally {
      off();
      await farm.close();
    }
  }, 180_000);

  it("reruns an iteration whose cluster is lost on another of its arm's clusters", async () => {
    const provider = testClusterProvider({
      kubeconfig: (id) => probeKubeconfig(id.replace("/", "-"), cutKubeconfig),
    });
    const byArm = await leases(provider);
    const farm = farmExecutor(farmConfig([{ name: "farm", api: farmApi }]), inject("redisUrl"));
    try {
      const running = farm.executor.execute({
        shard: shardOf({ count: 1, plan: plan(PROBE.slow) }),
        outDir: join(dir.path, "lost"),
        signal: new AbortController().signal,
        clusters: byArm,
      });
      // Iteration 0 runs on the first cluster of each arm; the PR arm's is lost under it.
      await expect.poll(() => farmApi.jobCreations().size, { timeout: 30_000 }).toBeGreaterThan(0);
      provider.lose(byArm.pr[0]!.cluster.id);
      const outcome = await running;
      expect(outcome).toMatchObject({ status: "completed" });
      if (outcome.status !== "completed") return;
      const pr = (await readResults(outcome.resultsPath)).filter((r) => r.arm === "pr");
      expect(pr.map((r) => [r.cluster, r.result])).toEqual([[byArm.pr[1]!.cluster.id, "passed"]]);
      await expect.poll(() => secretsIn(farmApi)).toHaveLength(0);
    } finally {
      await farm.close();
    }
  });

  it("replaces the Secret a bot stopped before creating its Job left behind, and the pod mounts the right cluster", async () => {
    const provider = testClusterProvider({
      kubeconfig: (id) => probeKubeconfig(id.replace("/", "-"), cutKubeconfig),
    });
    const byArm = await leases(provider);
    const shard = shardOf({ count: 1, plan: plan(PROBE.reads) });
    // The earlier bot created the PR arm's Secret, with another cluster's kubeconfig, then died.
    const prJob = jobName({ runId: shard.runId, arms: ["pr"], arch: "amd64", iteration: 0, attempt: 0 });
    const stale = probeKubeconfig("stale-cluster", cutKubeconfig);
    farmApi.store.create("secrets", {
      metadata: { name: jobSecretName(prJob), namespace: "netstress" },
      data: { pr: Buffer.from(stale).toString("base64") },
    } as KubeObject);
    const farm = farmExecutor(farmConfig([{ name: "farm", api: farmApi }]), inject("redisUrl"));
    try {
      const outcome = await farm.executor.execute({
        shard,
        outDir: join(dir.path, "left-behind"),
        signal: new AbortController().signal,
        clusters: byArm,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 2 });
      if (outcome.status !== "completed") return;
      const pr = (await readResults(outcome.resultsPath)).find((r) => r.arm === "pr")!;
      expect(pr).toMatchObject({ result: "passed", cluster: byArm.pr[0]!.cluster.id });
      expect((JSON.parse(pr.output) as { context: string }).context).toBe(
        byArm.pr[0]!.cluster.id.replace("/", "-"),
      );
      await expect.poll(() => secretsIn(farmApi)).toHaveLength(0);
    } finally {
      await farm.close();
    }
  });

  it("starts no iteration on a cluster whose life (a Hive claim's lifetime) ends within the Job's deadline, and says so when an arm has no other", async () => {
    const provider = testClusterProvider({
      kubeconfig: (id) => probeKubeconfig(id.replace("/", "-"), cutKubeconfig),
    });
    const byArm = await leases(provider);
    // An hour left, under the Job's deadline (4 h by default): an iteration there could outlive it.
    const ending = (lease: ClusterLease): ClusterLease => ({ ...lease, expiresAt: Date.now() + 3_600_000 });
    const farm = farmExecutor(farmConfig([{ name: "farm", api: farmApi }]), inject("redisUrl"));
    try {
      const passedOver = await farm.executor.execute({
        shard: shardOf({ count: 1, plan: plan(PROBE.reads) }),
        outDir: join(dir.path, "ending"),
        signal: new AbortController().signal,
        clusters: { ...byArm, pr: [ending(byArm.pr[0]!), byArm.pr[1]!] },
      });
      if (passedOver.status !== "completed") throw new Error(JSON.stringify(passedOver));
      const pr = (await readResults(passedOver.resultsPath)).filter((r) => r.arm === "pr");
      expect(pr.map((r) => r.cluster)).toEqual([byArm.pr[1]!.cluster.id]);

      const jobsBefore = farmApi.jobCreations().size;
      const none = await farm.executor.execute({
        shard: shardOf({ count: 1, plan: plan(PROBE.reads) }),
        outDir: join(dir.path, "ended"),
        signal: new AbortController().signal,
        clusters: { ...byArm, pr: byArm.pr.map(ending) },
      });
      expect(none.status).toBe("failed");
      expect(none.status === "failed" && none.reason).toMatch(
        /^no cluster of the pr arm is left: test\/\S+ its life ends at \S+, within the 14400 s a turn on it may take; test\/\S+ its life ends at/,
      );
      expect(farmApi.jobCreations().size).toBe(jobsBefore);
    } finally {
      await farm.close();
      await Promise.all([...byArm.pr, ...byArm.baseline].map((l) => l.release()));
    }
  });
});
