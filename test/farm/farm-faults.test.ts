import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ShardOutcome } from "../../src/runs/shard-executor.ts";
import { LABELS } from "@netstress/core/kube/netstress-labels.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import {
  startFakeKubeApi,
  type FakeImage,
  type FakeKubeApi,
  type FakeNode,
} from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { metricValue } from "../helpers/metric-value.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  farmConfig,
  farmExecutor,
  PLAN,
  POD_ENV,
  shardOf,
  simulatedImages,
  simulatedRunner,
  type SimulatedRun,
} from "./farm-fixture.ts";

let dir: { path: string; remove: () => Promise<void> };
const apis: FakeKubeApi[] = [];
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await Promise.all(apis.map((a) => a.stop()));
  await dir.remove();
});

async function cluster(
  runner: FakeImage,
  options: {
    maxRunning?: number;
    random?: () => number;
    nodes?: FakeNode[];
    /** The pods' tests container (default: a spawner that ends at once with exit 0). */
    tests?: FakeImage["simulate"];
  } = {},
): Promise<FakeKubeApi> {
  const api = await startFakeKubeApi({
    ...(options.random ? { random: options.random } : {}),
    ...(options.nodes ? { nodes: options.nodes } : {}),
    images: simulatedImages(runner, options.tests),
    baseEnv: POD_ENV,
    maxRunning: options.maxRunning ?? 8,
    bookmarkMs: 100,
    imagePullBackOffMs: 20,
  });
  apis.push(api);
  return api;
}

let outDirs = 0;
const outDir = () => join(dir.path, `shard-${++outDirs}`);
const results = async (outcome: ShardOutcome): Promise<ResultRecord[]> =>
  outcome.status === "failed"
    ? []
    : (await readFile(outcome.resultsPath, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as ResultRecord);
const liveJobs = (api: FakeKubeApi) => api.store.list("jobs", "netstress", () => true).items;
const livePods = (api: FakeKubeApi) => api.store.list("pods", "netstress", () => true).items;
/** Runs a shard of two iterations on the cluster `api`: its outcome and the Jobs it created. */
async function runTwoIterations(api: FakeKubeApi, config: ReturnType<typeof farmConfig>) {
  const farm = farmExecutor(config, inject("redisUrl"));
  try {
    const outcome = await farm.executor.execute({
      shard: shardOf({ count: 2 }),
      outDir: outDir(),
      signal: new AbortController().signal,
    });
    return { outcome, created: [...api.jobCreations().keys()] };
  } finally {
    await farm.close();
  }
}
const attemptsOf = (api: FakeKubeApi) =>
  [...api.jobCreations()]
    .map(([name, n]) => [name.replace(/^nst-\w+-both-amd64-/, ""), n] as const)
    .sort(([a], [b]) => a.localeCompare(b));

describe("infrastructure failures", () => {
  it("runs evicted, OOM-killed and node-lost iterations again and counts each iteration once", async () => {
    // The node is lost under iteration 2's first pod once iterations 0 and 1 have run again and
    // their results are in (their Jobs deleted), so that the loss takes no rerun with it however
    // slowly the machine runs the pods.
    const base = simulatedRunner({ delayMs: 300 });
    const rerunsCollected = () =>
      ["i0-a1", "i1-a1"].every((job) => attemptsOf(api).some(([name]) => name === job)) &&
      !liveJobs(api).some((job) => /-i[01]-a1$/.test(job.metadata.name));
    const api: FakeKubeApi = await cluster({
      async simulate(container) {
        const iteration = Number(container.args[container.args.indexOf("--first-iteration") + 1]);
        const attempt = Number(container.pod.labels[LABELS.attempt]);
        if (iteration === 2 && attempt === 0) {
          while (!rerunsCollected()) await new Promise((resolve) => setTimeout(resolve, 20));
          api.kubelet.loseNode("node-amd64");
        }
        return base.simulate!(container);
      },
    });
    api.kubelet.on(
      "started",
      ({ namespace, name, container }: { namespace: string; name: string; container: string }) => {
        if (container !== "runner" || !name.includes("-a0-")) return;
        if (name.includes("-i0-")) api.kubelet.evict(namespace, name);
        if (name.includes("-i1-")) api.kubelet.oomKill(namespace, name);
      },
    );
    const farm = farmExecutor(farmConfig([{ name: "solo", api }]), inject("redisUrl"));
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 4 }),
        outDir: outDir(),
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 16 });
      const records = await results(outcome);
      for (const iteration of [0, 1, 2, 3])
        expect(records.filter((r) => r.iteration === iteration)).toHaveLength(4);
      expect(records.filter((r) => r.result === "failed")).toHaveLength(4);
      // Each loss cost one more Job: a1 after a0, each created once. (Losing the node may take
      // iteration 3 along, whichever pods were on it at that moment.)
      const attempts = attemptsOf(api);
      expect(attempts.every(([, n]) => n === 1)).toBe(true);
      for (const iteration of ["i0", "i1", "i2"]) {
        expect(attempts.map(([name]) => name).filter((n) => n.startsWith(`${iteration}-`))).toEqual([
          `${iteration}-a0`,
          `${iteration}-a1`,
        ]);
      }
      expect(liveJobs(api)).toHaveLength(0);
    } finally {
      await farm.close();
    }
  });

  it.each([
    [
      "no node can take",
      // Says it runs amd64, has only arm64 nodes: the scheduler never places the pod.
      { nodes: [{ name: "arm-node", labels: { "kubernetes.io/arch": "arm64" } }] },
    ],
    // Its node takes the pod and never starts it, as with a sandbox or network that never comes up.
    ["its node never starts", { maxRunning: 0 }],
  ])(
    "gives up a pod %s after pendingSeconds and reruns the iteration on another cluster",
    async (_, stuckCluster) => {
      // "a-stuck" sorts first, so it gets work first.
      const stuck = await cluster(simulatedRunner({ delayMs: 100 }), stuckCluster);
      const good = await cluster(simulatedRunner({ delayMs: 100 }));
      const config = farmConfig(
        [
          { name: "a-stuck", api: stuck },
          { name: "b-good", api: good },
        ],
        { pendingSeconds: 1 },
      );
      const farm = farmExecutor(config, inject("redisUrl"));
      try {
        const started = Date.now();
        const outcome = await farm.executor.execute({
          shard: shardOf({ count: 2 }),
          outDir: outDir(),
          signal: new AbortController().signal,
        });
        expect(outcome).toMatchObject({ status: "completed", records: 8 });
        expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
        // One iteration (either: they are placed together) went to the stuck cluster once, was
        // given up, and ran again on the good one, beside the other iteration.
        const onStuck = attemptsOf(stuck);
        expect(onStuck).toEqual([[expect.stringMatching(/^i[01]-a0$/), 1]]);
        const given = onStuck[0]![0].slice(0, 2);
        const other = given === "i0" ? "i1" : "i0";
        expect(attemptsOf(good)).toEqual(
          [
            [`${given}-a1`, 1],
            [`${other}-a0`, 1],
          ].sort(([a], [b]) => String(a).localeCompare(String(b))),
        );
        await expect.poll(() => liveJobs(stuck)).toHaveLength(0);
      } finally {
        await farm.close();
      }
    },
  );

  /** Runs a shard on a cluster that evicts every runner pod whose name matches, one retry allowed. */
  async function runEvicting(count: number, evicts: (pod: string) => boolean) {
    const api = await cluster(simulatedRunner({ delayMs: 200 }));
    api.kubelet.on(
      "started",
      ({ namespace, name, container }: { namespace: string; name: string; container: string }) => {
        if (container === "runner" && evicts(name)) api.kubelet.evict(namespace, name);
      },
    );
    const farm = farmExecutor(farmConfig([{ name: "solo", api }], { infraRetries: 1 }), inject("redisUrl"));
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count }),
        outDir: outDir(),
        signal: new AbortController().signal,
      });
      return { api, outcome };
    } finally {
      await farm.close();
    }
  }

  it("leaves out an iteration lost more often than allowed and keeps the others, saying which and why", async () => {
    const { api, outcome } = await runEvicting(3, (pod) => pod.includes("-i1-"));
    expect(outcome).toMatchObject({ status: "completed", records: 8 });
    if (outcome.status !== "completed") return;
    expect(outcome.lost).toEqual([
      { iteration: 1, reason: expect.stringMatching(/after 2 attempts: .*evicted/) },
    ]);
    expect([...new Set((await results(outcome)).map((r) => r.iteration))].sort()).toEqual([0, 2]);
    expect(liveJobs(api)).toHaveLength(0);
  });

  it("fails the shard when every iteration is lost more often than allowed, naming every loss", async () => {
    const { api, outcome } = await runEvicting(1, () => true);
    expect(outcome.status).toBe("failed");
    const reason = outcome.status === "failed" ? outcome.reason : "";
    expect(reason).toMatch(/^every iteration was lost to the infrastructure: /);
    expect(reason).toMatch(/iteration 0 attempt 1 on solo: evicted: The node was low on resource: memory\./);
    expect(reason).toMatch(/after 2 attempts: iteration 0 attempt 0 on solo: evicted/);
    expect(liveJobs(api)).toHaveLength(0);
  });

  it("ends a shard whose image cannot be pulled at once, saying which image, without retrying", async () => {
    const api = await cluster(simulatedRunner({ delayMs: 10_000 }));
    const farm = farmExecutor(farmConfig([{ name: "solo", api }]), inject("redisUrl"));
    const missing = `registry.test/pr/ovn-kubernetes@sha256:${"f".repeat(64)}`;
    const plan = structuredClone(PLAN);
    plan.arms[0]!.components[0]!.digest = `sha256:${"f".repeat(64)}`;
    const started = Date.now();
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 3, plan }),
        outDir: outDir(),
        signal: new AbortController().signal,
      });
      expect(outcome.status).toBe("failed");
      expect(outcome.status === "failed" && outcome.reason).toContain(
        `cannot pull image ${missing} on node node-amd64`,
      );
      expect(Date.now() - started).toBeLessThan(5000);
      expect([...api.jobCreations().keys()].every((name) => name.endsWith("-a0"))).toBe(true);
      await expect.poll(() => liveJobs(api)).toHaveLength(0);
      await expect.poll(() => livePods(api)).toHaveLength(0);
    } finally {
      await farm.close();
    }
  });

  const runWithFirstAttempt = async (firstAttempt: SimulatedRun) => {
    const api = await cluster(
      simulatedRunner({
        delayMs: 50,
        behave: (iteration, attempt) => (iteration === 1 && attempt === 0 ? firstAttempt : "ok"),
      }),
    );
    return runTwoIterations(api, farmConfig([{ name: "solo", api }]));
  };

  it("runs an iteration whose record stream was cut again", async () => {
    const { outcome, created } = await runWithFirstAttempt("cut");
    expect(outcome).toMatchObject({ status: "completed", records: 8 });
    expect(created.filter((name) => name.includes("-i1-"))).toHaveLength(2);
  });

  it("reports a runner that gave up with its own words and does not run it again", async () => {
    const { outcome, created } = await runWithFirstAttempt({
      exitCode: 2,
      stderr: "netstress: --plan: not a valid plan",
    });
    expect(outcome.status === "failed" && outcome.reason).toMatch(
      /iteration 1 attempt 0 on solo: the runner failed \(exit 2\): netstress: --plan: not a valid plan/,
    );
    expect(created.some((name) => name.endsWith("-a1"))).toBe(false);
  });
});

describe("a tests container that dies", () => {
  // Iteration 1's first pod: its tests container is killed, and its runner, its spawner gone,
  // stops short of its stream's end (exiting as `exit`).
  const dyingTests = async (options: { runnerExit: number; infraRetries: number }) => {
    const api = await cluster(
      simulatedRunner({
        delayMs: 50,
        behave: (iteration, attempt) =>
          iteration === 1 && attempt === 0
            ? options.runnerExit === 0
              ? "cut"
              : { exitCode: options.runnerExit, stderr: "netstress: the process spawner went away" }
            : "ok",
      }),
      {
        tests: async ({ args, pod }) => {
          const first = pod.name.includes("-i1-a0-");
          expect(args).toContain("--listen");
          return { stdout: "", exitCode: first ? 137 : 0 };
        },
      },
    );
    return runTwoIterations(api, farmConfig([{ name: "solo", api }], { infraRetries: options.infraRetries }));
  };

  it("loses its iteration to the infrastructure and runs it again, though the runner failed too", async () => {
    const { outcome, created } = await dyingTests({ runnerExit: 2, infraRetries: 2 });
    expect(outcome).toMatchObject({ status: "completed", records: 8 });
    expect(outcome.status === "completed" && outcome.lost).toBeFalsy();
    expect(created.filter((name) => name.includes("-i1-"))).toHaveLength(2);
  });

  it("never counts what the runner streamed before it: the iteration is lost, saying why", async () => {
    const { outcome } = await dyingTests({ runnerExit: 0, infraRetries: 0 });
    expect(outcome).toMatchObject({ status: "completed", records: 4 });
    if (outcome.status !== "completed") return;
    expect(outcome.lost).toEqual([
      {
        iteration: 1,
        reason: expect.stringMatching(
          /attempt 0 on solo: its tests container was killed \(exit 137, Error\); its record stream is incomplete/,
        ) as string,
      },
    ]);
    expect([...new Set((await results(outcome)).map((r) => r.iteration))]).toEqual([0]);
  });
});

describe("placement and capacity", () => {
  it("never runs more Jobs on a cluster than its capacity; the rest wait their turn", async () => {
    const api = await cluster(simulatedRunner({ delayMs: 150 }));
    let active = 0;
    let peak = 0;
    api.store.subscribe((e) => {
      if (e.resource !== "jobs" || e.type === "MODIFIED") return;
      active += e.type === "ADDED" ? 1 : -1;
      peak = Math.max(peak, active);
    });
    const farm = farmExecutor(farmConfig([{ name: "small", api, capacity: 2 }]), inject("redisUrl"));
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 6 }),
        outDir: outDir(),
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 24 });
      expect(peak).toBe(2);
    } finally {
      await farm.close();
    }
  });

  it("fails a shard no cluster can take, listing the arches there are and the blocked clusters", async () => {
    const api = await cluster(simulatedRunner({ delayMs: 10 }));
    const farm = farmExecutor(
      farmConfig([
        { name: "x86", api },
        { name: "arm", api, arches: ["arm64"], blocked: "firmware upgrade" },
      ]),
      inject("redisUrl"),
    );
    try {
      expect(await farm.executor.arches()).toEqual(["amd64"]);
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 2, plan: { ...PLAN, arch: "arm64" } }),
        outDir: outDir(),
        signal: new AbortController().signal,
      });
      expect(outcome.status).toBe("failed");
      expect(outcome.status === "failed" && outcome.reason).toContain(
        "no build-farm cluster can run arm64 shards. Arches offered: amd64 (x86), arm64 (arm). Blocked: arm (firmware upgrade).",
      );
    } finally {
      await farm.close();
    }
  });

  it("on abort deletes the shard's Jobs and, with them, their pods", async () => {
    const api = await cluster(simulatedRunner({ delayMs: 30_000 }));
    const farm = farmExecutor(farmConfig([{ name: "solo", api }]), inject("redisUrl"));
    const abort = new AbortController();
    try {
      const running = farm.executor.execute({
        shard: shardOf({ count: 3 }),
        outDir: outDir(),
        signal: abort.signal,
      });
      await expect
        .poll(() => livePods(api).filter((p) => (p.status as { phase?: string }).phase === "Running"))
        .toHaveLength(3);
      abort.abort("aborted by @someone");
      expect(await running).toMatchObject({ status: "cancelled", records: 0 });
      expect(liveJobs(api)).toHaveLength(0);
      await expect.poll(() => livePods(api)).toHaveLength(0);
    } finally {
      await farm.close();
    }
  });
});

describe("API failures", () => {
  it("counts every failed call and cut watch per cluster and status for the metrics, and the shard still completes", async () => {
    // Every fourth call is answered 500 (never two in a row, so the cluster is not drained).
    let calls = 0;
    const api = await cluster(simulatedRunner({ delayMs: 200 }), {
      random: () => (++calls % 4 === 0 ? 0 : 0.5),
    });
    api.setFaults({ errorRate: 0.15 });
    const metrics = createMetrics({ defaultMetrics: false });
    const farm = farmExecutor(farmConfig([{ name: "flaky", api }]), inject("redisUrl"), {
      onApiError: (cluster, status) => metrics.kubernetesApiError({ cluster, status }),
    });
    const errors = async (status: string) =>
      metricValue(
        await metrics.registry.metrics(),
        `netstress_kubernetes_api_errors_total{cluster="flaky",status="${status}"}`,
      ) ?? 0;
    try {
      const outcome = await farm.executor.execute({
        shard: shardOf({ count: 3 }),
        outDir: outDir(),
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 12 });
      api.setFaults({ errorRate: 0 });
      expect(api.stats.faults).toBeGreaterThan(0);
      await expect.poll(() => errors("500")).toBe(api.stats.faults);
      // Watches cut mid-stream got no answer: counted without a status. The jobs and the pods watch.
      expect(await errors("none")).toBe(0);
      api.dropWatches();
      await expect.poll(() => errors("none")).toBe(2);
    } finally {
      await farm.close();
    }
  });
});
