import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ExecuteShardInput, ShardExecutor, ShardOutcome } from "../../src/runs/shard-executor.ts";
import { processExecute } from "../../src/queue/process-execute.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { emptyResults } from "../helpers/empty-results.ts";

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

const plan = {
  arch: "amd64" as const,
  arms: [{ arm: "pr" as const, components: [{ component: "sdn", binary: "/b" }] }],
};
const analyze: AnalyzeRunResults = async ({ resultsPaths }) => ({
  conclusion: "neutral",
  output: { title: `${resultsPaths.length} shards`, summary: resultsPaths.join(",") },
  reportPath: "/report.html",
});

function executorWith(execute: (input: ExecuteShardInput) => Promise<ShardOutcome>): ShardExecutor {
  return { name: "local", arches: async () => ["amd64"], execute };
}

async function execute(run: PrRun, executor: ShardExecutor, analyzer = analyze, log = env.deps.log) {
  await env.deps.store.create(run);
  const result = await processExecute(
    { ...env.deps, log },
    { executor, analyze: analyzer, dataDir: dir.path, progressIntervalMs: 10 },
    run.id,
  );
  return { result, run: (await env.deps.store.get(run.id)) as PrRun };
}

describe("the execute stage", () => {
  it("runs the shard with live progress, analyzes and concludes", async () => {
    const inputs: ExecuteShardInput[] = [];
    const { run } = await execute(
      runRecord({
        plan,
        options: { iterations: 5, baseline: "payload", focus: "DNS" },
        source: { ...runRecord().source, capabilities: ["ipv6"] },
      }),
      executorWith(async (input) => {
        inputs.push(input);
        for (let done = 1; done <= 3; done++) {
          input.onProgress?.({ done, total: 3, failed: 0 });
          await new Promise((r) => setTimeout(r, 15));
        }
        return { status: "completed", resultsPath: await emptyResults(input.outDir), records: 3 };
      }),
    );
    expect(inputs[0]!.shard).toMatchObject({
      id: "amd64-0-4",
      iterations: { first: 0, count: 5 },
      arms: ["pr"],
      focus: "DNS",
      parallel: 2,
      capabilities: ["ipv6"],
    });
    expect(run).toMatchObject({
      state: "completed",
      conclusion: "neutral",
      output: { title: "1 shards" },
      progress: { done: 3 },
    });
    const titles = env.github.checkRunWrites().map((w) => (w.body.output as { title: string }).title);
    expect(titles).toContain("Running — 3/3 executions, 0 failed (amd64)");
    expect(titles.at(-1)).toBe("1 shards");
  });

  it("ends timed_out when the run passes its deadline", async () => {
    const longAgo = new Date(Date.now() - 2 * 3600_000).toISOString();
    const { run } = await execute(
      runRecord({
        plan,
        state: "running",
        startedAt: longAgo,
        source: { ...runRecord().source, timeoutMinutes: 60 },
      }),
      executorWith(
        (input) =>
          new Promise((resolve) => {
            const cancelled = () => resolve({ status: "cancelled", resultsPath: "/r", records: 0 });
            if (input.signal.aborted) cancelled();
            input.signal.addEventListener("abort", cancelled);
          }),
      ),
    );
    expect(run).toMatchObject({ conclusion: "timed_out", reason: "the run took longer than 60 minutes" });
    expect(env.github.checkRunWrites().at(-1)!.body).toMatchObject({
      status: "completed",
      conclusion: "timed_out",
    });
  });

  it("ends failure with the reason when the executor cannot run the shard or the analysis breaks", async () => {
    const { run: infra } = await execute(
      runRecord({ plan }),
      executorWith(async () => ({ status: "failed", reason: "ELF machine arm64 on amd64" })),
    );
    expect(infra).toMatchObject({
      conclusion: "failure",
      reason: "the local executor could not run shard amd64-0-4: ELF machine arm64 on amd64",
    });
    const logged: Record<string, unknown>[] = [];
    const log = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) });
    const { run: broken } = await execute(
      runRecord({ plan }),
      executorWith(async (input) => ({
        status: "completed",
        resultsPath: await emptyResults(input.outDir),
        records: 0,
      })),
      async () => {
        throw new Error("results.jsonl is unreadable");
      },
      log,
    );
    expect(broken).toMatchObject({
      conclusion: "failure",
      reason: "the run failed: results.jsonl is unreadable",
    });
    // Logs name the run and the webhook delivery that asked for it.
    expect(logged.find((entry) => entry.msg === "run failed")).toMatchObject({
      runId: broken.id,
      deliveryId: broken.subject.trigger.deliveryId,
      err: { message: "results.jsonl is unreadable" },
    });
  });

  it("hands the analysis a note for each iteration the executor lost, and keeps them on the run", async () => {
    const given: (string[] | undefined)[] = [];
    const lost = [{ iteration: 3, reason: "iteration 3 attempt 2 on build01: evicted" }];
    const { run } = await execute(
      runRecord({ plan }),
      executorWith(async (input) => ({
        status: "completed",
        resultsPath: await emptyResults(input.outDir),
        records: 4,
        lost,
      })),
      async (input) => (given.push(input.notes), analyze(input)),
    );
    expect(given).toEqual([
      [
        "iteration 3 was lost to the infrastructure on every attempt and is left out: iteration 3 attempt 2 on build01: evicted",
      ],
    ]);
    expect(run.results[0]).toMatchObject({ id: "amd64-0-4", lost });
    expect(run.conclusion).toBe("neutral");
  });

  it("does not run again a shard that finished before a worker restart", async () => {
    let calls = 0;
    const { run } = await execute(
      runRecord({
        plan,
        state: "analyzing",
        startedAt: new Date().toISOString(),
        results: [{ id: "amd64-0-4", resultsPath: "/old/results.jsonl", first: 0, count: 5 }],
      }),
      executorWith(async () => {
        calls += 1;
        return { status: "failed", reason: "must not run" };
      }),
    );
    expect(calls).toBe(0);
    expect(run).toMatchObject({ conclusion: "neutral", output: { summary: "/old/results.jsonl" } });
  });

  it("leaves an interrupted run to the next worker when the bot stops", async () => {
    const shutdown = new AbortController();
    const run = runRecord({ plan });
    await env.deps.store.create(run);
    let executing!: () => void;
    const running = new Promise<void>((resolve) => (executing = resolve));
    const result = processExecute(
      env.deps,
      {
        executor: executorWith(
          (input) =>
            new Promise((resolve) => {
              input.signal.addEventListener("abort", () =>
                resolve({ status: "cancelled", resultsPath: "/r", records: 0 }),
              );
              executing();
            }),
        ),
        analyze,
        dataDir: dir.path,
        shutdown: shutdown.signal,
      },
      run.id,
    );
    // The bot stops while the shard runs.
    await running;
    shutdown.abort();
    expect(await result).toBe("interrupted");
    expect((await env.deps.store.get(run.id))!.state).toBe("running");
  });
});
