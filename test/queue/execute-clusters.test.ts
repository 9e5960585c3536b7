import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { createLocalExecutor } from "../../src/farm/local-executor.ts";
import { processExecute } from "../../src/queue/process-execute.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import type { ExecuteShardInput, ShardExecutor, ShardOutcome } from "../../src/runs/shard-executor.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { eventually } from "../helpers/github-api.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";
import { PROBE, probeKubeconfig, writeKubeconfigProbeBinary } from "../helpers/kubeconfig-probe-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { testClusterProvider, type TestClusterProvider } from "../helpers/test-cluster-provider.ts";
import { localImages } from "../helpers/local-images.ts";

const arch = hostArch();
const PAYLOAD = `quay.io/openshift-release-dev/ocp-release@sha256:${"3".repeat(64)}`;
let env: Awaited<ReturnType<typeof testRunDeps>>;
let dir: Awaited<ReturnType<typeof tempDir>>;
let api: FakeKubeApi;
let apiKubeconfig: string;
let probe: string;

beforeAll(async () => {
  api = await startFakeKubeApi();
  apiKubeconfig = await readFile(api.kubeconfigPath, "utf8");
});
afterAll(() => api.stop());
beforeEach(async () => {
  env = await testRunDeps();
  dir = await tempDir();
  probe = await writeKubeconfigProbeBinary(dir.path);
});
afterEach(async () => {
  await env.close();
  await dir.remove();
});

const provider = (options: Partial<Parameters<typeof testClusterProvider>[0]> = {}) =>
  testClusterProvider({
    kubeconfig: (id) => probeKubeconfig(id.replace("/", "-"), apiKubeconfig),
    ...options,
  });

const twoArms = () =>
  runRecord({
    arch,
    plan: {
      arch,
      arms: (["pr", "baseline"] as const).map((arm) => ({
        arm,
        components: [{ component: "probe", binary: probe, tests: [PROBE.reads] }],
      })),
    },
    options: { iterations: 4, baseline: "payload" },
    source: { ...runRecord().source, payload: PAYLOAD, clusters: 2 },
  });

const analyze: AnalyzeRunResults = async ({ resultsPaths }) => ({
  conclusion: "neutral",
  output: { title: "analyzed", summary: resultsPaths.join(",") },
  reportPath: "/report.html",
});

/** An executor that runs until its signal aborts (or `outcome` says otherwise). */
function executor(outcome?: (input: ExecuteShardInput) => Promise<ShardOutcome>): ShardExecutor & {
  inputs: ExecuteShardInput[];
} {
  const inputs: ExecuteShardInput[] = [];
  return {
    name: "local",
    inputs,
    arches: async () => [arch],
    execute: async (input) => {
      inputs.push(input);
      if (outcome) return outcome(input);
      return new Promise((resolve) => {
        const cancelled = () => resolve({ status: "cancelled", resultsPath: "/r", records: 0 });
        if (input.signal.aborted) cancelled();
        input.signal.addEventListener("abort", cancelled, { once: true });
      });
    },
  };
}

async function run(
  record: PrRun,
  options: { executor: ShardExecutor; clusters: TestClusterProvider; log?: pino.Logger },
): Promise<{ result: "done" | "interrupted"; run: PrRun }> {
  await env.deps.store.create(record);
  const result = await processExecute(
    { ...env.deps, log: options.log ?? env.deps.log },
    {
      executor: options.executor,
      clusters: () => options.clusters,
      analyze,
      dataDir: dir.path,
      progressIntervalMs: 10,
    },
    record.id,
  );
  return { result, run: (await env.deps.store.get(record.id)) as PrRun };
}

/** Resolves once the executor was handed its shard. */
async function started(exec: { inputs: ExecuteShardInput[] }): Promise<void> {
  await eventually(() => exec.inputs.length > 0, 60_000);
}

describe("the execute stage over clusters under test", () => {
  it("asks for clusters only once the build farm has taken the capacity of their iterations, and gives back what was unused", async () => {
    const clusters = provider();
    let farmFree!: () => void;
    const farmFull = new Promise<void>((resolve) => (farmFree = resolve));
    let farmAsked!: () => void;
    const asked = new Promise<void>((resolve) => (farmAsked = resolve));
    const reservations: { jobs: number; released: boolean }[] = [];
    const exec: ShardExecutor & { inputs: ExecuteShardInput[] } = {
      ...executor(async () => ({ status: "completed", resultsPath: "/r", records: 0 })),
      // A farm whose capacity other runs hold until farmFree().
      async reserveCapacity({ jobs, signal }) {
        farmAsked();
        await Promise.race([
          farmFull,
          new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
        ]);
        const reservation = { jobs, released: false };
        reservations.push(reservation);
        return { release: async () => void (reservation.released = true) };
      },
    };
    const record = twoArms();
    const running = run(record, { executor: exec, clusters });
    // The stage waits on the farm; its progress reaches the run record a coalescing interval later.
    await asked;
    const waiting = await eventually(async () => {
      const stored = await env.deps.store.get(record.id);
      return stored?.provisioning?.length === 2 && stored;
    });
    // The farm is full: no cluster is asked for (none would do anything but cost).
    expect(clusters.requests).toEqual([]);
    expect(waiting?.provisioning?.map((p) => [p.arm, p.phase, p.detail])).toEqual([
      ["pr", "queued", "waiting for build-farm capacity"],
      ["baseline", "queued", "waiting for build-farm capacity"],
    ]);
    farmFree();
    const { run: done } = await running;
    expect(clusters.requests.map((r) => r.arm)).toEqual(["pr", "baseline"]);
    expect(exec.inputs).toHaveLength(1);
    // One Job per cluster of an arm, and what the shard did not use went back.
    expect(reservations).toEqual([{ jobs: 2, released: true }]);
    expect(done.clusters).toHaveLength(4);
  });

  it("runs each arm on its own clusters, KUBECONFIG a file, records naming cluster and payload, and gives every cluster back", async () => {
    const clusters = provider({ installMs: 50 });
    const lines: string[] = [];
    const log = pino(
      { level: "debug" },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const local = createLocalExecutor({
      arches: [arch],
      cacheDir: join(dir.path, "cache"),
      images: await localImages(join(dir.path, "images")),
      env: {},
    });
    let records: ResultRecord[] = [];
    const exec: ShardExecutor = {
      ...local,
      execute: async (input) => {
        const outcome = await local.execute(input);
        if (outcome.status !== "failed") {
          records = (await readFile(outcome.resultsPath, "utf8"))
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as ResultRecord);
        }
        return outcome;
      },
    };
    const { run: done } = await run(twoArms(), { executor: exec, clusters, log });

    expect(done).toMatchObject({ state: "completed", conclusion: "neutral" });
    // Both arms asked at once, each for its payload and the run's count.
    expect(clusters.requests.map((r) => [r.arm, r.payload, r.count, r.arch])).toEqual([
      ["pr", PAYLOAD, 2, arch],
      ["baseline", PAYLOAD, 2, arch],
    ]);
    expect(clusters.held()).toEqual([]);
    expect(done.clusters!.map((c) => [c.arm, c.id])).toEqual([
      ["pr", "test/pr-0"],
      ["pr", "test/pr-1"],
      ["baseline", "test/baseline-2"],
      ["baseline", "test/baseline-3"],
    ]);
    expect(done.clusters!.every((c) => c.releasedAt && c.payload === PAYLOAD)).toBe(true);
    expect(done.provisioning).toBeUndefined();

    expect(records).toHaveLength(8);
    for (const r of records) {
      const id = `test/${r.arm}-${(r.arm === "pr" ? 0 : 2) + (r.iteration % 2)}`;
      expect(r).toMatchObject({ result: "passed", cluster: id, payload: PAYLOAD });
      const seen = JSON.parse(r.output) as {
        kubeconfig: string;
        mode: string;
        context: string;
        textInEnv: boolean;
      };
      expect(seen).toMatchObject({ mode: "600", context: id.replace("/", "-"), textInEnv: false });
    }
    // The kubeconfig files are gone with the shard.
    await expect(readFile(JSON.parse(records[0]!.output).kubeconfig as string)).rejects.toThrow(/ENOENT/);

    // No kubeconfig secret in the logs, the stored run or the check runs.
    const secret = /secret-of-|token: [0-9a-f]{32}/;
    const token = /token: (\S+)/.exec(apiKubeconfig)![1]!;
    const stored = JSON.stringify(await env.deps.store.get(done.id));
    const writes = JSON.stringify(env.github.checkRunWrites());
    for (const text of [lines.join(""), stored, writes]) {
      expect(text).not.toMatch(secret);
      expect(text).not.toContain(token);
    }
    const titles = env.github.checkRunWrites().map((w) => (w.body.output as { title: string }).title);
    expect(titles.some((t) => /installing 2 clusters of the PR payload/.test(t))).toBe(true);
  });

  for (const [how, end] of [
    ["an abort", (id: string) => env.deps.abortBus.publish(id, "aborted by alice")],
    ["supersession", (id: string) => env.deps.abortBus.publish(id, "superseded by 0123abc")],
  ] as const) {
    it(`gives every cluster back on ${how}`, async () => {
      const clusters = provider();
      const exec = executor();
      const record = twoArms();
      const running = run(record, { executor: exec, clusters });
      await started(exec);
      expect(clusters.held()).toHaveLength(4);
      await end(record.id);
      const { run: done } = await running;
      expect(done.conclusion).toBe("cancelled");
      expect(clusters.held()).toEqual([]);
      expect(done.clusters!.every((c) => c.releasedAt)).toBe(true);
    });
  }

  it("gives every cluster back when the run passes its deadline", async () => {
    const clusters = provider();
    const record = twoArms();
    const { run: done } = await run(
      {
        ...record,
        state: "running",
        startedAt: new Date(Date.now() - 60 * 60_000 + 1000).toISOString(),
      },
      { executor: executor(), clusters },
    );
    expect(done.conclusion).toBe("timed_out");
    expect(clusters.handedOut()).toHaveLength(4);
    expect(clusters.held()).toEqual([]);
  });

  it("gives every cluster back when the executor fails or throws", async () => {
    for (const outcome of [
      async (): Promise<ShardOutcome> => ({ status: "failed", reason: "no farm cluster for the arch" }),
      async (): Promise<ShardOutcome> => {
        throw new Error("the executor broke");
      },
    ]) {
      const clusters = provider();
      const { run: done } = await run(twoArms(), { executor: executor(outcome), clusters });
      expect(done.conclusion).toBe("failure");
      expect(clusters.handedOut()).toHaveLength(4);
      expect(clusters.held()).toEqual([]);
    }
  });

  it("gives the other arm's clusters back when one arm gets none, and says it is infrastructure", async () => {
    const clusters = provider({ refuse: { baseline: "hive quota 8/8 for 2 minutes" } });
    const exec = executor();
    const { run: done } = await run(twoArms(), { executor: exec, clusters });
    expect(exec.inputs).toHaveLength(0);
    expect(clusters.handedOut()).toHaveLength(2);
    expect(clusters.held()).toEqual([]);
    expect(done).toMatchObject({ conclusion: "failure" });
    expect(done.reason).toMatch(/no clusters under test .*not a test failure.*hive quota 8\/8/);
  });

  it("stops waiting for clusters on an abort, holding none", async () => {
    const clusters = provider({ installMs: 60_000 });
    const exec = executor();
    const record = twoArms();
    const running = run(record, { executor: exec, clusters });
    await eventually(() => clusters.requests.length >= 2, 60_000);
    await env.deps.abortBus.publish(record.id, "aborted by alice");
    const { run: done } = await running;
    expect(done).toMatchObject({ conclusion: "cancelled", reason: "aborted by alice" });
    expect(exec.inputs).toHaveLength(0);
    expect(clusters.held()).toEqual([]);
  });

  it("runs as before without a cluster source", async () => {
    const exec = executor(async (input) => ({
      status: "completed",
      resultsPath: join(input.outDir, "results.jsonl"),
      records: 0,
    }));
    const record = twoArms();
    await env.deps.store.create(record);
    await processExecute(env.deps, { executor: exec, analyze, dataDir: dir.path }, record.id);
    expect(exec.inputs[0]!.clusters).toBeUndefined();
    expect((await env.deps.store.get(record.id))!.clusters).toBeUndefined();
  });
});
