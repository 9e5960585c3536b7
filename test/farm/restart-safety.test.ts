import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gateRunRecord } from "../../src/gate/gate-run-record.ts";
import { createGateStore, gateRunId, type StoredGate } from "../../src/gate/gate-store.ts";
import { gateView } from "../../src/gate/gate-view.ts";
import { readGate } from "../../src/gate/read-gate.ts";
import { createRunQueues } from "../../src/queue/run-queues.ts";
import { createRunStore } from "../../src/queue/run-store.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  PLAN,
  POD_ENV,
  REGRESSED,
  RUNNER_IMAGE,
  simulatedImages,
  simulatedRunner,
  STABLE,
} from "./farm-fixture.ts";
import { startPersistentRedis } from "./persistent-redis.ts";

const BOT = fileURLToPath(new URL("./bot-process.ts", import.meta.url));
const RUNS = 6;
const ITERATIONS = 6;
/** SIGKILLs per test run; a soak sets more: FARM_KILLS=20 npx vitest run test/farm/restart-safety.test.ts */
const KILLS = Number(process.env.FARM_KILLS ?? 2);

let dir: { path: string; remove: () => Promise<void> };
let redis: Awaited<ReturnType<typeof startPersistentRedis>>;
let clusters: FakeKubeApi[];

beforeAll(async () => {
  dir = await tempDir();
  redis = await startPersistentRedis();
  // Pods take a while, so that kills land while Jobs are pending, running and finished.
  const runner = simulatedRunner({ delayMs: 700 });
  clusters = await Promise.all(
    ["east", "west"].map(() =>
      startFakeKubeApi({
        images: simulatedImages(runner),
        baseEnv: POD_ENV,
        maxRunning: 16,
        bookmarkMs: 200,
      }),
    ),
  );
});
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
  await redis.stop();
  await dir.remove();
});

function startBot(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", BOT], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`the bot exited (${code}) before it was ready`)));
  });
}

function runRecord(index: number): PrRun {
  const now = new Date().toISOString();
  const id = randomUUID().replaceAll("-", "");
  return {
    id,
    subject: {
      kind: "pr",
      requestId: `delivery-${index}/slot`,
      installationId: 1,
      owner: "openshift",
      repo: "ovn-kubernetes",
      pr: 100 + index,
      headSha: "f".repeat(40),
      trigger: { kind: "comment", actor: "someone", deliveryId: `delivery-${index}` },
    },
    arch: "amd64",
    options: { iterations: ITERATIONS, baseline: "payload" },
    source: { tags: ["ovn-kubernetes"], parallel: 2, timeoutMinutes: 30, imageWaitMinutes: 0 },
    dedupeKey: id,
    firstIteration: 0,
    results: [],
    state: "queued",
    plan: PLAN,
    revision: 0,
    createdAt: now,
    updatedAt: now,
  };
}

describe("restart safety", () => {
  it(
    "completes every run and a gate with the right verdict through SIGKILLs, a Redis restart and 10% API faults, without losing a shard or making a twin",
    async () => {
      const prefix = `restart-${randomUUID().slice(0, 8)}`;
      const configPath = join(dir.path, "farm.yaml");
      await writeFile(
        configPath,
        JSON.stringify({
          runner: { image: RUNNER_IMAGE },
          placement: { leaseSeconds: 10 },
          clusters: clusters.map((c, i) => ({
            name: ["east", "west"][i],
            kubeconfig: c.kubeconfigPath,
            namespace: "netstress",
            arches: ["amd64"],
            capacity: 6,
          })),
        }),
      );
      const env = {
        BOT_REDIS_URL: redis.url,
        BOT_PREFIX: prefix,
        BOT_FARM_CONFIG: configPath,
        BOT_STREAM_SECRET: "restart-safety-stream-secret",
        BOT_DATA_DIR: join(dir.path, "data"),
      };
      for (const cluster of clusters)
        cluster.setFaults({ errorRate: 0.05, timeoutRate: 0.05, dropWatchesEveryMs: 1500 });

      // Runs accepted and planned, but never queued: the bot's start-up reconciliation must find them.
      const client = new Redis(redis.url, { maxRetriesPerRequest: null });
      client.on("error", () => {}); // the restart below; commands wait for the reconnection
      const store = createRunStore({ redis: client, prefix });
      const runs = Array.from({ length: RUNS }, (_, i) => runRecord(i));
      for (const run of runs) await store.create(run);
      // And one that was running when its bot died, and whose deadline passed while none ran.
      const orphan: PrRun = {
        ...runRecord(RUNS),
        state: "running",
        startedAt: new Date(Date.now() - 3600_000).toISOString(),
      };
      await store.create(orphan);
      // And a release gate on the same farms, queued as the gate API queues it.
      const gates = createGateStore({ redis: client, prefix });
      const gate: StoredGate = {
        id: randomUUID().replaceAll("-", ""),
        payload: "registry.test/ocp/release:candidate",
        baselinePayload: "registry.test/ocp/release:latest",
        baselineSource: "request",
        stream: "4.19.0-0.nightly",
        iterations: ITERATIONS,
        arches: ["amd64"],
        createdAt: new Date().toISOString(),
        requestKey: `restart-${prefix}`,
      };
      const gateRun = gateRunRecord({
        gate,
        arch: "amd64",
        settings: { parallel: 2, timeoutMinutes: 30 },
        now: new Date(),
      });
      await gates.createOrJoin(gate, [gateRun]);
      const queues = createRunQueues({ connection: client, prefix });
      await queues.enqueueResolve(gateRun.id);
      await queues.close();
      const gateArchOf = async () =>
        gateView((await readGate({ gates, runs: store }, gate.id))!, "http://bot.test").arches[0]!;

      const kills: number[] = [];
      let bot = await startBot(env);
      const started = Date.now();
      try {
        // The first kill lands while the gate has Jobs on the farms, for the restarted bot to adopt.
        const gateJobs = () =>
          clusters.flatMap((c) =>
            c.store
              .list("jobs", "netstress", () => true)
              .items.filter(
                (j) => j.metadata.annotations?.["netstress.io/run-id"] === gateRunId(gate.id, "amd64"),
              ),
          );
        await expect.poll(gateJobs, { timeout: 30_000, interval: 50 }).not.toHaveLength(0);
        for (let round = 0; round < KILLS; round++) {
          if (round > 0) await new Promise((r) => setTimeout(r, 1000 + Math.random() * 2000));
          if (round === Math.floor(KILLS / 2)) await redis.restart();
          bot.kill("SIGKILL");
          kills.push(Date.now() - started);
          bot = await startBot(env);
        }
        const allDone = async () =>
          (await Promise.all([...runs, orphan].map((r) => store.get(r.id)))).every(
            (r) => r?.state === "completed",
          ) && (await gateArchOf()).state === "completed";
        await expect.poll(allDone, { timeout: 90_000 + KILLS * 15_000, interval: 500 }).toBe(true);
      } finally {
        bot.kill("SIGKILL");
      }
      const elapsed = Date.now() - started;

      for (const { id } of runs) {
        const run = (await store.get(id))!;
        // The PR's build fails one test every time, the released one never: a regression, found.
        expect(run.conclusion, run.reason).toBe("failure");
        expect(run.output?.summary ?? "").toContain("regression");
        const records = (await readFile(run.results[0]!.resultsPath, "utf8"))
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as ResultRecord);
        const seen = records.map((r) => `${r.iteration}/${r.arm}/${r.name}`).sort();
        const expected = Array.from({ length: ITERATIONS }, (_, i) =>
          ["baseline", "pr"].flatMap((arm) => [REGRESSED, STABLE].map((name) => `${i}/${arm}/${name}`)),
        )
          .flat()
          .sort();
        expect(seen).toEqual(expected);
      }
      // The gate found the regression too: its Jobs were adopted across restarts, not deleted.
      const gateArch = await gateArchOf();
      expect(gateArch.verdict, gateArch.reasons.join("; ")).toBe("Rejected");
      expect(gateArch.reasons.join("\n")).toContain(REGRESSED);
      const timedOut = (await store.get(orphan.id))!;
      expect([timedOut.conclusion, timedOut.reason]).toEqual([
        "timed_out",
        "the run took longer than 30 minutes",
      ]);
      const creations = clusters.flatMap((c) => [...c.jobCreations()]);
      expect(creations.filter(([, n]) => n > 1)).toEqual([]);
      expect(new Set(creations.map(([name]) => name)).size).toBe(creations.length);
      for (const cluster of clusters) {
        await expect
          .poll(() => cluster.store.list("jobs", "netstress", () => true).items, { timeout: 10_000 })
          .toHaveLength(0);
      }
      const faults = clusters.reduce((sum, c) => sum + c.stats.faults, 0);
      const calls = clusters.reduce(
        (sum, c) => sum + [...c.stats.calls.values()].reduce((a, b) => a + b, 0),
        0,
      );
      console.log(
        `restart safety: ${RUNS} runs x ${ITERATIONS} iterations and a gate of ${ITERATIONS} (+1 orphan past its deadline, concluded timed_out), SIGKILL at ${kills.map((k) => `${(k / 1000).toFixed(1)}s`).join(", ")}, ` +
          `Redis restarted once, ${faults} injected API faults in ${calls} calls, ${creations.length} Jobs created (none twice), ` +
          `all runs concluded in ${(elapsed / 1000).toFixed(1)}s`,
      );
      await client.quit();
    },
    150_000 + KILLS * 20_000,
  );
});
