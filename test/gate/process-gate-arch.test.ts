import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Arch } from "../../src/arch/arch.ts";
import type { Shard, ShardExecutor } from "../../src/farm/shard-executor.ts";
import {
  createGateStore,
  gateRequestKey,
  type GateStore,
  type StoredGate,
} from "../../src/gate/gate-store.ts";
import { createGateQueue, startGateWorker } from "../../src/gate/gate-queue.ts";
import { gateArchDir, processGateArch, type GateWorkerDeps } from "../../src/gate/process-gate-arch.ts";
import { requeueActiveGates } from "../../src/gate/requeue-active-gates.ts";
import { createHistoryStore, type HistoryStore } from "../../src/history/history-store.ts";
import type { ExecutionPlan } from "../../src/runner/execution-plan.ts";
import type { ResultRecord } from "../../src/runner/result-record.ts";
import { armRecords } from "../analysis/make-records.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const CANDIDATE = "quay.io/ocp/release@sha256:" + "c".repeat(64);
const RELEASED = "quay.io/ocp/release@sha256:" + "a".repeat(64);
const TESTS = [
  "[sig-network] pods reach pods",
  "[sig-network] services answer",
  "[sig-network] DNS resolves",
];

let redis: Redis;
let store: GateStore;
let history: HistoryStore;
let dataDir: string;
let removeDir: () => Promise<void>;
let counter = 0;
const prefix = `test-gate-worker-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  redis = new Redis(inject("redisUrl"));
  store = createGateStore({ redis, prefix });
  history = createHistoryStore({ redis, prefix });
  ({ path: dataDir, remove: removeDir } = await tempDir("netstress-gate-worker-"));
});
afterAll(async () => {
  await redis.quit();
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
      const resultsPath = join(outDir, "results.jsonl");
      await writeFile(resultsPath, lines.map((record) => JSON.stringify(record)).join("\n") + "\n");
      return { status: "completed", resultsPath, records: lines.length };
    },
  };
}

const planOf = (arch: Arch, arms: ("pr" | "baseline")[]): ExecutionPlan => ({
  arch,
  arms: arms.map((arm) => ({ arm, components: [{ component: "ovn-kubernetes", binary: "/bin/true" }] })),
});

async function startedGate(overrides: Partial<StoredGate> = {}): Promise<StoredGate> {
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
  await store.createOrJoin(gate);
  return gate;
}

function deps(executor: ShardExecutor, arms: ("pr" | "baseline")[] = ["pr", "baseline"]): GateWorkerDeps {
  return {
    store,
    history,
    executor,
    resolvePlan: async ({ arch }) => planOf(arch, arms),
    dataDir,
    publicUrl: "https://netstress.example.test",
    parallel: 2,
    timeoutMinutes: 5,
    log: pino({ level: "silent" }),
  };
}

/** Each test in both arms; `failing` fails that many PR iterations of the first test. */
const bothArms =
  (runs: number, failing = 0) =>
  (arch: Arch) =>
    TESTS.flatMap((name, i) => [
      ...armRecords({ name, arm: "pr", runs, failed: i === 0 ? failing : 0 }),
      ...armRecords({ name, arm: "baseline", runs }),
    ]).map((record) => ({ ...record, arch }));

const archOf = async (gate: StoredGate, arch: Arch = "amd64") =>
  (await store.get(gate.id))!.arches.find((a) => a.arch === arch)!;

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

describe("the gate worker", () => {
  it("hands a running arch to the next worker when it stops, and that worker finishes it", async () => {
    const gate = await startedGate();
    const connection = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
    const queue = createGateQueue({ connection, prefix });
    const started: Shard[] = [];
    const first = startGateWorker({ connection, prefix, concurrency: 1, deps: deps(untilAborted(started)) });
    let second: { close(): Promise<void> } | undefined;
    try {
      await queue.enqueue({ gateId: gate.id, arch: "amd64" });
      await expect.poll(() => started.length).toBe(1);
      await first.close();
      // Not concluded: left running, and its job back on the queue.
      expect(await archOf(gate)).toMatchObject({ state: "running" });
      expect(await queue.queue.getJobState(`${gate.id}.amd64`)).toBe("delayed");

      second = startGateWorker({
        connection,
        prefix,
        concurrency: 1,
        deps: deps(scriptedExecutor(bothArms(10))),
      });
      await expect.poll(async () => (await archOf(gate)).state, { timeout: 15_000 }).toBe("completed");
      expect(await archOf(gate)).toMatchObject({ verdict: "Accepted" });
    } finally {
      await second?.close();
      await queue.close();
      await connection.quit();
    }
  });

  it("queues the unfinished arches of active gates whose jobs were lost, and queueing again adds nothing", async () => {
    const own = `${prefix}-requeue`;
    const gates = createGateStore({ redis, prefix: own });
    const connection = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
    const queue = createGateQueue({ connection, prefix: own });
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
    try {
      // Stored, one arch done, the other never queued: the process died in between.
      await gates.createOrJoin(gate("half"));
      await gates.setArch("half", { arch: "amd64", state: "completed", verdict: "Accepted", reasons: [] });
      // Decided entirely: no longer active.
      await gates.createOrJoin(gate("decided"));
      for (const arch of ["amd64", "arm64"] as const)
        await gates.setArch("decided", { arch, state: "completed", verdict: "Rejected", reasons: ["x"] });
      const log = pino({ level: "silent" });
      expect(await requeueActiveGates({ store: gates, queue, log })).toBe(1);
      await requeueActiveGates({ store: gates, queue, log });
      const jobs = await queue.queue.getJobs(["waiting", "delayed", "active"]);
      expect(jobs.map((job) => job.id)).toEqual(["half.arm64"]);
    } finally {
      await queue.queue.obliterate({ force: true });
      await queue.close();
      await connection.quit();
    }
  });

  it("counts the deadline from the arch's first start, so a resumed arch gets no fresh one", async () => {
    const gate = await startedGate();
    const startedAt = new Date(Date.now() - 10 * 60_000).toISOString();
    await store.setArch(gate.id, { arch: "amd64", state: "running", reasons: [], startedAt });
    expect(await processGateArch(deps(untilAborted()), { gateId: gate.id, arch: "amd64" })).toBe("done");
    expect(await archOf(gate)).toMatchObject({
      state: "completed",
      verdict: "Inconclusive",
      reasons: ["the run took longer than 5 minutes"],
      startedAt,
    });
  });
});

describe("a gate arch", () => {
  it("asks the executor for the build-farm capabilities the gate requires", async () => {
    const gate = await startedGate({ capabilities: ["ipv6"] });
    const shards: Shard[] = [];
    const executor = scriptedExecutor(bothArms(10));
    await processGateArch(
      deps({ ...executor, execute: (input) => (shards.push(input.shard), executor.execute(input)) }),
      { gateId: gate.id, arch: "amd64" },
    );
    expect(shards.map((shard) => shard.capabilities)).toEqual([["ipv6"]]);
    expect(await archOf(gate)).toMatchObject({ state: "completed", verdict: "Accepted" });
  });

  it("is Rejected when the candidate regresses, with the test named and the report written", async () => {
    const gate = await startedGate();
    await processGateArch(deps(scriptedExecutor(bothArms(10, 8))), { gateId: gate.id, arch: "amd64" });
    const arch = await archOf(gate);
    expect(arch).toMatchObject({
      state: "completed",
      verdict: "Rejected",
      reportUrl: `https://netstress.example.test/gates/${gate.id}/amd64/report`,
    });
    expect(arch.reasons.join("\n")).toContain("[sig-network] pods reach pods");
    expect(
      await readFile(join(gateArchDir(dataDir, gate.id, "amd64"), "report", "report.html"), "utf8"),
    ).toContain("<html");
    // A rejected candidate stays out of the stream's pool; the released payload joins it.
    const pool = await history.read({ stream: gate.stream, arch: "amd64" });
    expect(pool.runs).toBe(1);
    expect(pool.tests.find((t) => t.name === TESTS[0])).toEqual({ name: TESTS[0], runs: 10, passes: 10 });
  });

  it("is Accepted when nothing got worse over enough iterations, and both arms join the pool", async () => {
    const gate = await startedGate({ arches: ["amd64", "arm64"] });
    await processGateArch(deps(scriptedExecutor(bothArms(10))), { gateId: gate.id, arch: "arm64" });
    const arch = await archOf(gate, "arm64");
    expect(arch.verdict).toBe("Accepted");
    expect(arch.reasons[0]).toMatch(
      /no blocking test got worse: 3 blocking test\(s\) over 10 iterations; a blocking test failing \d+% of the time or more would have been caught/,
    );
    expect((await history.read({ stream: gate.stream, arch: "arm64" })).runs).toBe(2);
    expect(await history.read({ stream: gate.stream, arch: "amd64" })).toMatchObject({ runs: 0, tests: [] });
    // The other arch has not run: the gate is still running.
    expect((await store.get(gate.id))!.arches.map((a) => a.state)).toEqual(["queued", "completed"]);
  });

  it("is Inconclusive, never Accepted, when too few iterations ran", async () => {
    const gate = await startedGate({ iterations: 3 });
    await processGateArch(deps(scriptedExecutor(bothArms(3))), { gateId: gate.id, arch: "amd64" });
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
    await processGateArch(deps(failing), { gateId: gate.id, arch: "amd64" });
    expect(await archOf(gate)).toMatchObject({
      state: "completed",
      verdict: "Inconclusive",
      reasons: ["the scripted executor could not run amd64: the farm lost the pod"],
    });
    expect((await history.read({ stream: gate.stream, arch: "amd64" })).runs).toBe(0);

    const noArch = await startedGate({ arches: ["s390x"] });
    await processGateArch(deps(scriptedExecutor(bothArms(10))), { gateId: noArch.id, arch: "s390x" });
    expect((await archOf(noArch, "s390x")).reasons).toEqual([
      "no scripted executor runs s390x (available: amd64, arm64)",
    ]);

    const unresolvable = await startedGate();
    await processGateArch(
      {
        ...deps(scriptedExecutor(bothArms(10))),
        resolvePlan: async () => Promise.reject(new Error("manifest unknown")),
      },
      { gateId: unresolvable.id, arch: "amd64" },
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
    await processGateArch(deps(scriptedExecutor(prOnly), ["pr"]), { gateId: gate.id, arch: "amd64" });
    const arch = await archOf(gate);
    expect(arch.verdict).toBe("Rejected");
    expect(arch.history).toMatchObject({ runs: 30, from: expect.any(String), to: expect.any(String) });
    const report = await readFile(
      join(gateArchDir(dataDir, gate.id, "amd64"), "report", "report.html"),
      "utf8",
    );
    expect(report).toContain("pooled from 30 run(s)");
    // Nothing of a rejected candidate without a baseline arm joins the pool.
    expect((await history.read({ stream, arch: "amd64" })).runs).toBe(30);
  });

  it("does nothing for a gate arch that already completed", async () => {
    const gate = await startedGate();
    await store.setArch(gate.id, {
      arch: "amd64",
      state: "completed",
      verdict: "Accepted",
      reasons: ["done"],
    });
    let executed = false;
    const executor: ShardExecutor = {
      ...scriptedExecutor(bothArms(10)),
      execute: async () => ((executed = true), { status: "failed", reason: "x" }),
    };
    await processGateArch(deps(executor), { gateId: gate.id, arch: "amd64" });
    expect(executed).toBe(false);
    await expect(stat(gateArchDir(dataDir, gate.id, "amd64"))).rejects.toThrow();
  });
});
