import { join } from "node:path";
import type { ExecutionPlan } from "../runner/execution-plan.ts";
import type { RunProgress } from "../runner/run-plan.ts";
import type { RunRecord } from "../runs/run-record.ts";
import type { AnalyzeRunResults } from "../runs/analyze-port.ts";
import { lostIterationNotes } from "../runs/lost-iteration-notes.ts";
import { runWording } from "../runs/run-wording.ts";
import { shardId, type Shard, type ShardExecutor } from "../runs/shard-executor.ts";
import { createCoalescer } from "./coalesce.ts";
import { applyAndPublish, runScoped, type RunDeps } from "./run-deps.ts";

/** The run's plan with the tests it selects: its suite and whether [Disruptive] tests may run. */
function withSelection(plan: ExecutionPlan, options: RunRecord["options"]): ExecutionPlan {
  if (!options.suite && !options.includeDisruptive) return plan;
  return {
    ...plan,
    selection: {
      ...plan.selection,
      ...(options.suite ? { suite: options.suite } : {}),
      ...(options.includeDisruptive ? { includeDisruptive: true } : {}),
    },
  };
}

/** Where a run's files live: its shard's results under shards/, its report under report/. */
export function runDir(dataDir: string, runId: string): string {
  return join(dataDir, "runs", runId);
}

export interface ExecuteStageOptions {
  executor: ShardExecutor;
  analyze: AnalyzeRunResults;
  /** Runs live under <dataDir>/runs/<run id>/. */
  dataDir: string;
  /** At most one progress update of a check run per interval. */
  progressIntervalMs?: number;
  testTimeoutMs?: number;
  retries?: number;
  /**
   * Aborted when this process stops: executions stop, but the run is not concluded, so that the
   * job, found stalled, resumes on the next worker.
   */
  shutdown?: AbortSignal;
}

const TIMED_OUT = "timed out";
const SHUTDOWN = "the bot is stopping";

/**
 * The execute stage of a run, whatever its subject ("interrupted": this process is stopping and
 * the run must resume elsewhere): runs its iterations through the shard executor with live
 * (bounded rate) progress, honours abort and the run's deadline (counted from its first start),
 * analyzes all its results (with those of the run it extends) and concludes. A shard that finished
 * before a worker restart is not run again.
 */
export async function processExecute(
  stageDeps: RunDeps,
  options: ExecuteStageOptions,
  runId: string,
): Promise<"done" | "interrupted"> {
  const { executor, progressIntervalMs = 15_000, testTimeoutMs = 15 * 60_000, retries = 1 } = options;
  if (options.shutdown?.aborted) return "interrupted";
  const initial = await stageDeps.store.get(runId);
  if (!initial || initial.state === "completed") return "done";
  const deps = runScoped(stageDeps, initial);
  if (!initial.plan) {
    await applyAndPublish(deps, runId, {
      type: "concluded",
      conclusion: "failure",
      reason: "the run has no plan",
    });
    return "done";
  }
  const started = await applyAndPublish(deps, runId, { type: "started" });
  if (!started) return "done";

  const controller = new AbortController();
  const unregister = deps.abortBus.register(runId, controller);
  const onShutdown = () => controller.abort(SHUTDOWN);
  options.shutdown?.addEventListener("abort", onShutdown, { once: true });
  if (options.shutdown?.aborted) onShutdown();
  const deadline = Date.parse(started.startedAt!) + started.source.timeoutMinutes * 60_000;
  const timer = setTimeout(() => controller.abort(TIMED_OUT), Math.max(0, deadline - Date.now()));
  let progress: RunProgress | undefined;
  const progressUpdates = createCoalescer({
    intervalMs: progressIntervalMs,
    task: async () => {
      const updated = progress && (await deps.store.apply(runId, { type: "progress", progress }));
      if (updated) await deps.publish(updated);
    },
    onError: (error) => deps.log.warn({ err: error }, "progress update failed"),
  });
  const conclude = (conclusion: "failure" | "timed_out" | "cancelled", reason: string) =>
    applyAndPublish(deps, runId, { type: "concluded", conclusion, reason });

  try {
    const iterations = { first: started.firstIteration, count: started.options.iterations };
    const shard: Shard = {
      runId,
      id: shardId(started.arch, iterations),
      arch: started.arch,
      arms: started.plan!.arms.map((a) => a.arm),
      iterations,
      plan: withSelection(started.plan!, started.options),
      seed: runId.slice(0, 16),
      ...(started.source.capabilities?.length ? { capabilities: started.source.capabilities } : {}),
      ...(started.options.focus ? { focus: started.options.focus } : {}),
      parallel: started.source.parallel,
      ...(started.source.networkParallel ? { networkParallel: started.source.networkParallel } : {}),
      testTimeoutMs,
      retries,
    };
    if (!started.results.some((s) => s.id === shard.id)) {
      const outcome = await executor.execute({
        shard,
        outDir: join(runDir(options.dataDir, runId), "shards", shard.id),
        signal: controller.signal,
        onProgress: (p) => {
          progress = p;
          progressUpdates.request();
        },
      });
      await progressUpdates.flush();
      if (outcome.status === "failed") {
        await conclude(
          "failure",
          runWording.executorFailed(started, {
            executor: executor.name,
            shardId: shard.id,
            reason: outcome.reason,
          }),
        );
        return "done";
      }
      if (outcome.status === "cancelled") {
        if (controller.signal.reason === SHUTDOWN) return "interrupted";
        if (controller.signal.reason === TIMED_OUT) {
          await conclude("timed_out", `the run took longer than ${started.source.timeoutMinutes} minutes`);
        } else {
          await conclude("cancelled", String(controller.signal.reason ?? "cancelled"));
        }
        return "done";
      }
      const finished = {
        id: shard.id,
        resultsPath: outcome.resultsPath,
        ...iterations,
        ...(outcome.lost ? { lost: outcome.lost } : {}),
      };
      if (!(await deps.store.apply(runId, { type: "results-finished", results: finished }))) return "done";
    }
    const analyzing = await applyAndPublish(deps, runId, { type: "analyzing" });
    if (!analyzing) return "done";
    const analysis = await options.analyze({
      run: analyzing,
      resultsPaths: analyzing.results.map((s) => s.resultsPath),
      outDir: join(runDir(options.dataDir, runId), "report"),
      notes: lostIterationNotes(analyzing.results.flatMap((s) => s.lost ?? [])),
    });
    await applyAndPublish(deps, runId, { type: "analyzed", ...analysis });
  } catch (error) {
    deps.log.error({ err: error }, "run failed");
    await conclude("failure", `the run failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timer);
    unregister();
    options.shutdown?.removeEventListener("abort", onShutdown);
    await progressUpdates.flush();
  }
  return "done";
}
