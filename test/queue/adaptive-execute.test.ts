import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { processExecute } from "../../src/queue/process-execute.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { testClusterProvider } from "../helpers/test-cluster-provider.ts";
import { weatherExecutor } from "../helpers/weather-executor.ts";

const PAYLOAD = `quay.io/openshift-release-dev/ocp-release@sha256:${"4".repeat(64)}`;
const REGRESSED = "[sig-network] NodePort service should be reachable from the host network";
const TESTS = [REGRESSED, ...Array.from({ length: 5 }, (_, i) => `[sig-network] check ${i + 1} should pass`)];

let env: Awaited<ReturnType<typeof testRunDeps>>;
let dir: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  env = await testRunDeps();
  dir = await tempDir();
});
afterEach(async () => {
  await env.close();
  await dir.remove();
});

const analyze: AnalyzeRunResults = async ({ resultsPaths }) => ({
  conclusion: "success",
  output: { title: "analyzed", summary: `${resultsPaths.length} result sets` },
  reportPath: "/report.html",
});

/** An adaptive run of both arms on one payload: shared clusters. */
const adaptiveRun = (): PrRun =>
  runRecord({
    plan: {
      arch: "amd64",
      arms: (["pr", "baseline"] as const).map((arm) => ({
        arm,
        components: [{ component: "ovn-kubernetes", binary: "/nonexistent" }],
      })),
    },
    options: { iterations: 10, baseline: "payload" },
    source: {
      ...runRecord().source,
      payload: PAYLOAD,
      adaptive: { target: { from: 0.02, to: 0.32 }, budgetIterations: 40 },
    },
  });

describe("an adaptive run in the execute stage", () => {
  it("resumes after the bot stops mid-batch with the batch it was running, keeping the batches it finished", async () => {
    const record = adaptiveRun();
    await env.deps.store.create(record);
    const clusters = testClusterProvider({ kubeconfig: () => "apiVersion: v1\nkind: Config\n" });
    const first = { shards: 0, executions: 0 };
    const shutdown = new AbortController();
    const shards: string[] = [];
    const stage = (executor: ReturnType<typeof weatherExecutor>, signal?: AbortSignal) =>
      processExecute(
        env.deps,
        {
          executor,
          clusters: () => clusters,
          analyze,
          dataDir: dir.path,
          progressIntervalMs: 10,
          ...(signal ? { shutdown: signal } : {}),
        },
        record.id,
      );
    // The bot stops while its second batch runs.
    const stopping = weatherExecutor({
      tests: TESTS,
      regressed: REGRESSED,
      payload: PAYLOAD,
      executed: first,
      before: async ({ shard, signal }) => {
        shards.push(shard.id);
        if (shards.length < 2) return "run";
        shutdown.abort();
        return signal.aborted ? "cancelled" : "run";
      },
    });
    expect(await stage(stopping, shutdown.signal)).toBe("interrupted");
    const stopped = (await env.deps.store.get(record.id))!;
    expect(stopped.state).toBe("running");
    expect(stopped.adaptive!.batches.map((b) => b.shardId)).toEqual(shards);
    expect(stopped.results.map((r) => r.id)).toEqual([shards[0]]);
    expect(stopped.adaptive!.decision!.tests).toHaveLength(TESTS.length);

    const resumed: string[] = [];
    const second = { shards: 0, executions: 0 };
    const executor = weatherExecutor({
      tests: TESTS,
      regressed: REGRESSED,
      payload: PAYLOAD,
      executed: second,
      before: async ({ shard }) => {
        resumed.push(shard.id);
        return "run";
      },
    });
    expect(await stage(executor)).toBe("done");
    // The batch that was running runs again first; the finished one never does.
    expect(resumed[0]).toBe(shards[1]);
    expect(resumed).not.toContain(shards[0]);
    const done = (await env.deps.store.get(record.id))!;
    expect(done.state).toBe("completed");
    expect(done.results.map((r) => r.id)).toEqual(done.adaptive!.batches.map((b) => b.shardId));
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.decision).toBe("regression");
    expect(done.conclusion).toBe("failure");
    // What the stopped process held stays for the resuming one to adopt (this source never adopts:
    // start-up reconciliation gives them back); what the resumed one took it gave back.
    expect(clusters.held().sort()).toEqual(stopped.clusters!.map((c) => c.id).sort());
  }, 60_000);

  it("plans and decides each batch from its own records: a batch's results are never read again once a decision kept what the next ones need, after a restart too", async () => {
    const record = adaptiveRun();
    await env.deps.store.create(record);
    const clusters = testClusterProvider({ kubeconfig: () => "apiVersion: v1\nkind: Config\n" });
    const stage = (before: Parameters<typeof weatherExecutor>[0]["before"], shutdown?: AbortSignal) =>
      processExecute(
        env.deps,
        {
          executor: weatherExecutor({
            tests: TESTS,
            regressed: REGRESSED,
            payload: PAYLOAD,
            executed: { shards: 0, executions: 0 },
            before,
          }),
          clusters: () => clusters,
          analyze,
          dataDir: dir.path,
          progressIntervalMs: 10,
          ...(shutdown ? { shutdown } : {}),
        },
        record.id,
      );
    // Each batch's results are gone once the next batch starts: reading them again would fail the run.
    const ran: string[] = [];
    const forget = async () => {
      await Promise.all(ran.map((earlier) => rm(join(earlier, "results.jsonl"), { force: true })));
    };
    // The bot stops as its second batch starts, and the resumed run goes on without the first's results.
    const shutdown = new AbortController();
    const stopping = async ({ outDir }: { outDir: string }) => {
      if (ran.length === 0) {
        ran.push(outDir);
        return "run" as const;
      }
      shutdown.abort();
      return "cancelled" as const;
    };
    expect(await stage(stopping, shutdown.signal)).toBe("interrupted");
    await forget();
    const resumed = async ({ outDir }: { outDir: string }) => {
      await forget();
      ran.push(outDir);
      return "run" as const;
    };
    expect(await stage(resumed)).toBe("done");
    const done = (await env.deps.store.get(record.id))!;
    expect(done.reason ?? "").not.toMatch(/the run failed/);
    expect(ran.length).toBeGreaterThan(1);
    expect(done.adaptive!.batches).toHaveLength(ran.length);
    expect(done.adaptive!.decision!.stopped).not.toBeNull();
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.decision).toBe("regression");
  }, 60_000);
});
