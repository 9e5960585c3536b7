import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createCapacityLedger } from "../../src/farm/capacity-ledger.ts";
import { reconcileFarmJobs } from "../../src/farm/reconcile-farm-jobs.ts";
import { requeueActiveRuns } from "../../src/queue/requeue-active-runs.ts";
import { gateRunRecord } from "../../src/gate/gate-run-record.ts";
import { gateRunId, type StoredGate } from "../../src/gate/gate-store.ts";
import { createRunLiveness } from "../../src/queue/run-liveness.ts";
import { createRunQueues } from "../../src/queue/run-queues.ts";
import type { RunRecord } from "../../src/runs/run-record.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  farmConfig,
  farmExecutor,
  PLAN,
  POD_ENV,
  shardOf,
  simulatedImages,
  simulatedRunner,
} from "./farm-fixture.ts";

const logger = pino({ level: "silent" });
let dir: { path: string; remove: () => Promise<void> };
let api: FakeKubeApi;
let redis: Redis;

beforeAll(async () => {
  dir = await tempDir();
  api = await startFakeKubeApi({
    images: simulatedImages(simulatedRunner({ delayMs: 60_000 })),
    baseEnv: POD_ENV,
  });
  redis = new Redis(inject("redisUrl"));
});
afterAll(async () => {
  await api.stop();
  await redis.quit();
  await dir.remove();
});

const run = (id: string, changes: Partial<Omit<RunRecord, "subject">> = {}) => runRecord({ id, ...changes });

function gate(id: string): StoredGate {
  return {
    id,
    payload: "quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64",
    baselinePayload: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64",
    baselineSource: "request",
    stream: "4.18.0-0.nightly",
    iterations: 1,
    arches: ["amd64", "arm64"],
    createdAt: new Date().toISOString(),
    requestKey: id,
  };
}

describe("start-up reconciliation", () => {
  it("keeps and counts the Jobs of active runs and gates, deletes those of runs and gates that ended or vanished, and re-queues active runs", async () => {
    const prefix = `reconcile-${randomUUID()}`;
    const store = createRunStore({ redis, prefix });
    const config = farmConfig([{ name: "solo", api, capacity: 8 }]);
    const gateIds = { running: `running-${randomUUID()}`, decided: `decided-${randomUUID()}` };
    const ids = {
      active: `active-${randomUUID()}`,
      ended: `ended-${randomUUID()}`,
      unknown: `unknown-${randomUUID()}`,
      runningGate: gateRunId(gateIds.running, "arm64"),
      decidedGate: gateRunId(gateIds.decided, "arm64"),
    };

    // A bot dispatched one iteration of each run, then died without cleaning up.
    const before = farmExecutor(config, inject("redisUrl"), { prefix });
    for (const id of Object.values(ids)) {
      void before.executor.execute({
        shard: shardOf({ runId: id, count: 1 }),
        outDir: join(dir.path, id),
        signal: new AbortController().signal,
      });
    }
    await expect
      .poll(() => api.store.list("jobs", "netstress", () => true).items, { timeout: 10_000 })
      .toHaveLength(5);
    await before.close();

    await store.create(run(ids.active, { state: "running", plan: PLAN }));
    await store.create(run(ids.ended));
    await store.apply(ids.ended, { type: "concluded", conclusion: "cancelled", reason: "aborted by @a" });
    const waiting = run(`waiting-${randomUUID()}`);
    await store.create(waiting);
    await store.apply(waiting.id, {
      type: "images-pending",
      missing: ["pr image"],
      next: new Date(Date.now() + 60_000),
    });

    // Two gates on two arches: one still runs its arm64 arch, the other has decided both.
    const settings = { parallel: 2, timeoutMinutes: 30 };
    for (const [gateId, arm64] of [
      [gateIds.running, "running"],
      [gateIds.decided, "completed"],
    ] as const) {
      for (const arch of ["amd64", "arm64"] as const) {
        const gateRun = gateRunRecord({ gate: gate(gateId), arch, settings, now: new Date() });
        await store.create({ ...gateRun, plan: PLAN });
        await store.apply(gateRun.id, { type: "started" });
        if (arch === "amd64" || arm64 === "completed")
          await store.apply(gateRun.id, { type: "concluded", conclusion: "failure", reason: "x" });
      }
    }

    const after = farmExecutor(config, inject("redisUrl"), { prefix });
    const queues = createRunQueues({ connection: redis, prefix });
    try {
      const result = await reconcileFarmJobs({
        executor: after.executor,
        isRunActive: createRunLiveness(store),
        logger,
      });
      expect(result).toEqual({ adopted: 2, deleted: 3, unreachable: [] });
      const left = api.store.list("jobs", "netstress", () => true).items;
      expect(left.map((j) => j.metadata.annotations?.["netstress.io/run-id"]).sort()).toEqual(
        [ids.active, ids.runningGate].sort(),
      );
      // Their capacity counts at once, before their runs resume.
      const ledger = createCapacityLedger({ redis, prefix, leaseMs: 1000 });
      expect((await ledger.loads(["solo"], [])).load.get("solo")).toBe(2);

      // The running gate's run is a run like the others: it is re-queued with them.
      expect(await requeueActiveRuns({ runs: store, queues, logger })).toBe(3);
      expect((await queues.execute.getJob(ids.active))?.data).toEqual({ runId: ids.active });
      expect((await queues.execute.getJob(ids.runningGate))?.data).toEqual({ runId: ids.runningGate });
      const resolve = await queues.resolve.getJob(`${waiting.id}.1`);
      expect(await resolve?.getState()).toBe("delayed");
      // Queueing again adds nothing: job ids come from run ids.
      await requeueActiveRuns({ runs: store, queues, logger });
      expect((await queues.execute.getJobCounts("waiting")).waiting).toBe(2);
    } finally {
      await queues.close();
      await after.close();
    }
  });
});
