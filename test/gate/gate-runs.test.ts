import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { gateRunRecord } from "../../src/gate/gate-run-record.ts";
import { gateRequestKey, gateRunId, type StoredGate } from "../../src/gate/gate-store.ts";
import { gateView } from "../../src/gate/gate-view.ts";
import { readGate } from "../../src/gate/read-gate.ts";
import { startGate } from "../../src/gate/start-gate.ts";
import { createHistoryStore, type HistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import { processExecute } from "../../src/queue/process-execute.ts";
import { applyAndPublish } from "../../src/queue/run-deps.ts";
import { runDir } from "../../src/queue/run-dir.ts";
import { processResolve } from "../../src/queue/process-resolve.ts";
import { requeueActiveRuns } from "../../src/queue/requeue-active-runs.ts";
import { startWorkers } from "../../src/queue/start-workers.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import type { GateRun } from "../../src/runs/run-record.ts";
import type { ResolveRunPlan } from "../../src/runs/plan-resolver.ts";
import type { Shard, ShardExecutor } from "../../src/runs/shard-executor.ts";
import { armRecords } from "../analysis/make-records.ts";
import { decideGateArch, testGateDeps } from "../helpers/gate-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const CANDIDATE = "quay.io/ocp/release@sha256:" + "c".repeat(64);
const RELEASED = "quay.io/ocp/release@sha256:" + "a".repeat(64);
const TESTS = [
  "[sig-network] pods reach pods",
  "[sig-network] services answer",
  "[sig-network] DNS resolves",
];

let env: Awaited<ReturnType<typeof testGateDeps>>;
let history: HistoryStore;
let dataDir: string;
let removeDir: () => Promise<void>;
let counter = 0;
const settings = { parallel: 2, timeoutMinutes: 5 };

beforeAll(async () => {
  env = await testGateDeps();
  history = createHistoryStore({ redis: env.redis, prefix: env.prefix });
  ({ path: dataDir, remove: removeDir } = await tempDir("netstress-gate-runs-"));
});
afterAll(async () => {
  await env.close();
  await removeDir();
});

/** An executor that "runs" a shard by writing the records a test scripted for it. */
function scriptedExecutor(
  records: (arch: Arch) => ResultRecord[],
  arches: Arch[] = ["amd64", "arm64"],
): ShardExecutor {
  return {
    name: "scripted",
    arches: async () => arches,
    async execute({ shard, outDir }) {
      await mkdir(outDir, { recursive: true });
      const lines = records(shard.arch).filter((record) => shard.arms.includes(record.arm));
      // Whole, as executors write it (another execution of the shard may be reading the directory).
      const resultsPath = join(outDir, "results.jsonl");
      const written = `${resultsPath}.${randomUUID()}`;
      await writeFile(written, lines.map((record) => JSON.stringify(record)).join("\n") + "\n");
      await rename(written, resultsPath);
      return { status: "completed", resultsPath, records: lines.length };
    },
  };
}

const planOf = (arch: Arch, arms: ("pr" | "baseline")[]): ExecutionPlan => ({
  arch,
  arms: arms.map((arm) => ({ arm, components: [{ component: "ovn-kubernetes", binary: "/bin/true" }] })),
});

/** A gate as the API starts it, its runs queued, unless `runs` says how to store them. */
async function startedGate(
  overrides: Partial<StoredGate> = {},
  runs?: (run: GateRun) => GateRun,
): Promise<StoredGate> {
  const id = (counter++).toString(16).padStart(32, "0");
  const base = {
    payload: CANDIDATE,
    baselinePayload: RELEASED,
    stream: `stream-${id}`,
    arches: ["amd64"] as Arch[],
    iterations: 10,
  };
  const gate: StoredGate = {
    id,
    ...base,
    baselineSource: "release-controller",
    createdAt: new Date().toISOString(),
    requestKey: gateRequestKey(base),
    ...overrides,
  };
  if (runs) {
    const records = gate.arches.map((arch) => runs(gateRunRecord({ gate, arch, settings, now: new Date() })));
    await env.gates.createOrJoin(gate, records);
  } else {
    await startGate({ gates: env.gates, runs: env.runs, runSettings: settings, now: () => new Date() }, gate);
  }
  return gate;
}

interface Stages {
  executor: ShardExecutor;
  resolvePlan: ResolveRunPlan;
  analyze: AnalyzeRunResults;
}

function stages(executor: ShardExecutor, arms: ("pr" | "baseline")[] = ["pr", "baseline"]): Stages {
  return {
    executor,
    resolvePlan: async ({ run }) => ({ kind: "ready", plan: planOf(run.arch, arms) }),
    analyze: createRunAnalyzer({ history, log: env.runs.log }),
  };
}

/** One gate arch through the run pipeline's stages, as the resolve and execute workers run them. */
async function runArch(input: Stages, gateId: string, arch: Arch): Promise<"done" | "interrupted"> {
  const id = gateRunId(gateId, arch);
  await processResolve(env.runs, { resolvePlan: input.resolvePlan, executor: input.executor }, id);
  return processExecute(env.runs, { executor: input.executor, analyze: input.analyze, dataDir }, id);
}

const reportOf = (gateId: string, arch: Arch) =>
  join(runDir(dataDir, gateRunId(gateId, arch)), "report", "report.html");

/** Each test in both arms; `failing` fails that many PR iterations of the first test. */
const bothArms =
  (runs: number, failing = 0) =>
  (arch: Arch) =>
    TESTS.flatMap((name, i) => [
      ...armRecords({ name, arm: "pr", runs, failed: i === 0 ? failing : 0 }),
      ...armRecords({ name, arm: "baseline", runs }),
    ]).map((record) => ({ ...record, arch }));

const viewOf = async (gate: StoredGate) =>
  gateView(
    (await readGate({ gates: env.gates, runs: env.runs.store }, gate.id))!,
    "https://netstress.example.test",
  );
const archOf = async (gate: StoredGate, arch: Arch = "amd64") =>
  (await viewOf(gate)).arches.find((a) => a.arch === arch)!;

/** An executor whose shards run until they are aborted; `started` lists them as they start. */
function untilAborted(started: Shard[] = []): ShardExecutor {
  return {
    name: "scripted",
    arches: async () => ["amd64"],
    execute: (input) => {
      started.push(input.shard);
      return new Promise((resolve) =>
        input.signal.addEventListener("abort", () =>
          resolve({ status: "cancelled", resultsPath: "/none", records: 0 }),
        ),
      );
    },
  };
}

describe("gate runs on the run workers", () => {
  it("hands a running arch to the next worker when it stops, and that worker finishes it", async () => {
    const gate = await startedGate();
    const id = gateRunId(gate.id, "amd64");
    const started: Shard[] = [];
    const start = (input: Stages) =>
      startWorkers({
        connection: env.redis,
        prefix: env.prefix,
        deps: env.runs,
        intake: async () => {},
        resolve: { executor: input.executor, resolvePlan: input.resolvePlan },
        execute: { executor: input.executor, analyze: input.analyze, dataDir },
        executeConcurrency: 1,
      });
    const first = start(stages(untilAborted(started)));
    let second: { close(): Promise<void> } | undefined;
    try {
      await expect.poll(() => started.length).toBe(1);
      await first.close();
      // Not concluded: left running, and its job back on the queue.
      expect(await archOf(gate)).toMatchObject({ state: "running" });
      expect(await env.runs.queues.execute.getJobState(id)).toBe("delayed");

      second = start(stages(scriptedExecutor(bothArms(10))));
      await expect.poll(async () => (await archOf(gate)).state, { timeout: 15_000 }).toBe("completed");
      expect(await archOf(gate)).toMatchObject({ verdict: "Accepted" });
    } finally {
      await second?.close();
    }
  });

  it("queues the unfinished arches of active gates whose jobs were lost, and queueing again adds nothing", async () => {
    const own = await testGateDeps();
    const gate = (id: string): StoredGate => ({
      id,
      payload: CANDIDATE,
      baselinePayload: RELEASED,
      baselineSource: "request",
      stream: "4.19.0-0.nightly",
      iterations: 10,
      arches: ["amd64", "arm64"],
      createdAt: new Date().toISOString(),
      requestKey: `key-${id}`,
    });
    const decide = async (gateId: string, arch: Arch) =>
      own.runs.store.apply(gateRunId(gateId, arch), {
        type: "concluded",
        conclusion: "failure",
        reason: "x",
      });
    try {
      // Stored, one arch done, the other never queued: the process died in between.
      for (const id of ["half", "decided"]) {
        const runs = (["amd64", "arm64"] as const).map((arch) =>
          gateRunRecord({ gate: gate(id), arch, settings, now: new Date() }),
        );
        await own.gates.createOrJoin(gate(id), runs);
      }
      await decide("half", "amd64");
      // Decided entirely: no longer active.
      for (const arch of ["amd64", "arm64"] as const) await decide("decided", arch);
      const logger = own.runs.log;
      expect(await requeueActiveRuns({ runs: own.runs.store, queues: own.runs.queues, logger })).toBe(1);
      await requeueActiveRuns({ runs: own.runs.store, queues: own.runs.queues, logger });
      const jobs = await own.runs.queues.resolve.getJobs(["waiting", "delayed", "active"]);
      expect(jobs.map((job) => job.id)).toEqual([`${gateRunId("half", "arm64")}.0`]);
    } finally {
      await own.runs.queues.resolve.obliterate({ force: true });
      await own.close();
    }
  });

  it("counts the deadline from the arch's first start, so a resumed arch gets no fresh one", async () => {
    const startedAt = new Date(Date.now() - 10 * 60_000).toISOString();
    // A worker started the arch ten minutes ago and died.
    const gate = await startedGate({}, (run) => ({
      ...run,
      state: "running",
      startedAt,
      plan: planOf("amd64", ["pr", "baseline"]),
    }));
    expect(await runArch(stages(untilAborted()), gate.id, "amd64")).toBe("done");
    expect(await archOf(gate)).toMatchObject({
      state: "completed",
      verdict: "Inconclusive",
      reasons: ["the run took longer than 5 minutes"],
      startedAt,
    });
  });

  it("keeps exactly one outcome when two workers race on one arch (compare-and-set)", async () => {
    const gate = await startedGate();
    const id = gateRunId(gate.id, "amd64");
    const analyzed: string[][] = [];
    const counting: Stages = {
      ...stages(scriptedExecutor(bothArms(10))),
      analyze: async (input) => {
        analyzed.push(input.resultsPaths);
        return createRunAnalyzer({ history, log: env.runs.log })(input);
      },
    };
    // A stalled job resumed elsewhere while its first worker still lives: both run the arch at once,
    // one finding a regression, the other none.
    const regressing = { ...counting, executor: scriptedExecutor(bothArms(10, 8)) };
    await processResolve(env.runs, { resolvePlan: counting.resolvePlan, executor: counting.executor }, id);
    const outcomes = await Promise.all([
      processExecute(env.runs, { executor: counting.executor, analyze: counting.analyze, dataDir }, id),
      processExecute(env.runs, { executor: regressing.executor, analyze: regressing.analyze, dataDir }, id),
    ]);
    expect(outcomes).toEqual(["done", "done"]);
    const run = (await env.runs.store.get(id))!;
    // One set of results stands, every analysis read that set, and the verdict is its verdict.
    expect(run.results).toHaveLength(1);
    expect(analyzed.length).toBeGreaterThan(0);
    for (const paths of analyzed) expect(paths).toEqual([run.results[0]!.resultsPath]);
    const kept = await readFile(run.results[0]!.resultsPath, "utf8");
    const regressed = kept.includes('"result":"failed"');
    expect((await archOf(gate)).verdict).toBe(regressed ? "Rejected" : "Accepted");
    // The released payload joined the pool once (and an accepted candidate once).
    expect((await history.read({ stream: gate.stream, arch: "amd64" })).runs).toBe(regressed ? 1 : 2);
    // A late progress report of the loser changes nothing.
    expect(
      await env.runs.store.apply(id, { type: "progress", progress: { done: 1, total: 2, failed: 0 } }),
    ).toBeUndefined();
    expect((await env.runs.store.get(id))!.revision).toBe(run.revision);
  });
});

describe("a gate arch", () => {
  it("asks the executor for the build-farm capabilities the gate requires", async () => {
    const gate = await startedGate({ capabilities: ["ipv6"] });
    const shards: Shard[] = [];
    const executor = scriptedExecutor(bothArms(10));
    await runArch(
      stages({ ...executor, execute: (input) => (shards.push(input.shard), executor.execute(input)) }),
      gate.id,
      "amd64",
    );
    expect(shards.map((shard) => shard.capabilities)).toEqual([["ipv6"]]);
    expect(await archOf(gate)).toMatchObject({ state: "completed", verdict: "Accepted" });
  });

  it("is Rejected when the candidate regresses, with the test named and the report written", async () => {
    const gate = await startedGate();
    await runArch(stages(scriptedExecutor(bothArms(10, 8))), gate.id, "amd64");
    const arch = await archOf(gate);
    expect(arch).toMatchObject({
      state: "completed",
      verdict: "Rejected",
      reportUrl: `https://netstress.example.test/gates/${gate.id}/amd64/report`,
    });
    expect(arch.reasons.join("\n")).toContain("[sig-network] pods reach pods");
    expect(await readFile(reportOf(gate.id, "amd64"), "utf8")).toContain("<html");
    // A rejected candidate stays out of the stream's pool; the released payload joins it.
    const pool = await history.read({ stream: gate.stream, arch: "amd64" });
    expect(pool.runs).toBe(1);
    expect(pool.tests.find((t) => t.name === TESTS[0])).toEqual({ name: TESTS[0], runs: 10, passes: 10 });
  });

  it("is Accepted when nothing got worse over enough iterations, and both arms join the pool", async () => {
    const gate = await startedGate({ arches: ["amd64", "arm64"] });
    await runArch(stages(scriptedExecutor(bothArms(10))), gate.id, "arm64");
    const arch = await archOf(gate, "arm64");
    expect(arch.verdict).toBe("Accepted");
    expect(arch.reasons[0]).toMatch(
      /no blocking test got worse: 3 blocking test\(s\) over 10 iterations; a blocking test failing \d+% of the time or more would have been caught/,
    );
    expect((await history.read({ stream: gate.stream, arch: "arm64" })).runs).toBe(2);
    expect(await history.read({ stream: gate.stream, arch: "amd64" })).toMatchObject({ runs: 0, tests: [] });
    // The other arch has not run: the gate is still running.
    expect((await viewOf(gate)).arches.map((a) => a.state)).toEqual(["queued", "completed"]);
  });

  it("is Inconclusive, never Accepted, when too few iterations ran", async () => {
    const gate = await startedGate({ iterations: 3 });
    await runArch(stages(scriptedExecutor(bothArms(3))), gate.id, "amd64");
    const arch = await archOf(gate);
    expect(arch.verdict).toBe("Inconclusive");
    expect(arch.reasons[0]).toContain("only 3 iteration(s) ran; at least 6 are needed");
  });

  it("is Inconclusive with the reason when the infrastructure fails, and pools nothing", async () => {
    const failing: ShardExecutor = {
      ...scriptedExecutor(bothArms(10)),
      execute: async () => ({ status: "failed", reason: "the farm lost the pod" }),
    };
    const gate = await startedGate();
    await runArch(stages(failing), gate.id, "amd64");
    expect(await archOf(gate)).toMatchObject({
      state: "completed",
      verdict: "Inconclusive",
      reasons: ["the scripted executor could not run amd64: the farm lost the pod"],
    });
    expect((await history.read({ stream: gate.stream, arch: "amd64" })).runs).toBe(0);

    const noArch = await startedGate({ arches: ["s390x"] });
    await runArch(stages(scriptedExecutor(bothArms(10))), noArch.id, "s390x");
    expect((await archOf(noArch, "s390x")).reasons).toEqual([
      "no scripted executor runs s390x (available: amd64, arm64)",
    ]);

    const unresolvable = await startedGate();
    await runArch(
      {
        ...stages(scriptedExecutor(bothArms(10))),
        resolvePlan: async () => Promise.reject(new Error("manifest unknown")),
      },
      unresolvable.id,
      "amd64",
    );
    expect((await archOf(unresolvable)).reasons).toEqual([
      "the payloads could not be resolved for amd64: manifest unknown",
    ]);
  });

  it("compares a candidate that is the stream's latest with the stream's pool, and says how large the pool was", async () => {
    const stream = "4.20.0-0.nightly";
    for (let run = 0; run < 30; run++) {
      await history.record({
        stream,
        arch: "amd64",
        runId: `earlier-${run}`,
        tests: TESTS.map((name) => ({ name, runs: 10, passes: 10 })),
      });
    }
    const gate = await startedGate({ stream, baselinePayload: CANDIDATE });
    const prOnly = (arch: Arch) => bothArms(10, 8)(arch).filter((record) => record.arm === "pr");
    await runArch(stages(scriptedExecutor(prOnly), ["pr"]), gate.id, "amd64");
    const arch = await archOf(gate);
    expect(arch.verdict).toBe("Rejected");
    expect(arch.history).toMatchObject({ runs: 30, from: expect.any(String), to: expect.any(String) });
    const report = await readFile(reportOf(gate.id, "amd64"), "utf8");
    expect(report).toContain("pooled from 30 run(s)");
    // Nothing of a rejected candidate without a baseline arm joins the pool.
    expect((await history.read({ stream, arch: "amd64" })).runs).toBe(30);
  });

  it("shows a crossover's upgrades on the arch while they happen: which clusters, how many are done, until its halves run", async () => {
    const halves = [
      {
        arm: "pr" as const,
        shardId: "amd64-10-19",
        first: 10,
        count: 10,
        clusters: 2,
        upgrade: ["c-0", "c-1"],
      },
      { arm: "baseline" as const, shardId: "amd64-20-29", first: 20, count: 10, clusters: 2, firstSlot: 2 },
    ];
    const gate = await startedGate({}, (run) => ({
      ...run,
      state: "running",
      startedAt: new Date().toISOString(),
      payloads: { pr: CANDIDATE, baseline: RELEASED },
      adaptive: {
        design: "crossover by upgrade",
        batches: [
          { shardId: "amd64-0-9", first: 0, count: 10, clusters: 2, iterationsPerCluster: 5 },
          { shardId: "amd64-10-29", first: 10, count: 20, clusters: 4, iterationsPerCluster: 5, halves },
        ],
      },
    }));
    const id = gateRunId(gate.id, "amd64");
    expect((await archOf(gate)).upgrading).toBeUndefined();

    await applyAndPublish(env.runs, id, { type: "upgrades-started", batch: 2, clusters: ["c-0", "c-1"] });
    expect((await archOf(gate)).upgrading).toMatchObject({
      batch: 2,
      payload: CANDIDATE,
      clusters: [
        { id: "c-0", state: "upgrading" },
        { id: "c-1", state: "upgrading" },
      ],
      line: expect.stringMatching(
        /^upgrading 2 cluster\(s\) to the candidate payload since \d\d:\d\d UTC \(batch 2\)$/,
      ),
    });
    const now = new Date().toISOString();
    await applyAndPublish(env.runs, id, {
      type: "cluster-upgraded",
      upgrade: {
        id: "c-1",
        startedAt: now,
        finishedAt: now,
        failed: "the upgrade did not complete in 5400 s",
      },
    });
    await applyAndPublish(env.runs, id, {
      type: "cluster-upgraded",
      upgrade: { id: "c-0", startedAt: now, finishedAt: now },
    });
    expect((await archOf(gate)).upgrading).toMatchObject({
      clusters: [
        { id: "c-0", state: "upgraded" },
        { id: "c-1", state: "failed" },
      ],
      line: expect.stringMatching(/\(batch 2\): 1 done, 1 failed$/),
    });

    await applyAndPublish(env.runs, id, { type: "upgrades-ended" });
    expect((await archOf(gate)).upgrading).toBeUndefined();
  });

  it("does nothing for a gate arch that already completed", async () => {
    const gate = await startedGate();
    await decideGateArch(env.runs, {
      gateId: gate.id,
      arch: "amd64",
      verdict: "Accepted",
      reasons: ["done"],
    });
    let executed = false;
    const executor: ShardExecutor = {
      ...scriptedExecutor(bothArms(10)),
      execute: async () => ((executed = true), { status: "failed", reason: "x" }),
    };
    await runArch(stages(executor), gate.id, "amd64");
    expect(executed).toBe(false);
    await expect(stat(runDir(dataDir, gateRunId(gate.id, "amd64")))).rejects.toThrow();
  });
});
