import { DEFAULT_CLUSTERS_PER_ARM } from "../config/cluster-count.ts";
import { adaptiveDesign, clusterSourceTraits } from "./adaptive-design.ts";
import { analyzeAndConclude } from "./analyze-and-conclude.ts";
import type { ExecuteContext, ExecuteStageOptions } from "./execute-context.ts";
import { executeShard } from "./execute-shard.ts";
import { runBatches } from "./run-batches.ts";
import { withRunClusters } from "./run-cluster-scope.ts";
import { applyAndPublish, runScoped, type RunDeps } from "./run-deps.ts";
import { runProgressUpdates } from "./run-progress-updates.ts";
import { runSignal } from "./run-signal.ts";
import { shardOfRun } from "./shard-of-run.ts";
import type { StepEnd } from "./step-end.ts";

/**
 * The execute stage of a run, whatever its subject ("interrupted": this process is stopping and
 * the run must resume elsewhere), as a pipeline: one signal stops it (abort, its deadline counted
 * from its first start, shutdown); its clusters are held as a scoped resource, always given back;
 * its iterations run through the shard executor with live (bounded rate) progress — an adaptive run
 * (mode: adaptive) as batches — on shared clusters, or a crossover by upgrade — until its decision
 * step stops it (runBatches), any
 * other as one shard, which is not run again when it finished before a worker restart; then every
 * result (with those of the run it extends) is analyzed and the run concluded.
 */
export async function processExecute(
  stageDeps: RunDeps,
  options: ExecuteStageOptions,
  runId: string,
): Promise<"done" | "interrupted"> {
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

  const stop = runSignal({
    abortBus: deps.abortBus,
    runId,
    deadline: Date.parse(started.startedAt!) + started.source.timeoutMinutes * 60_000,
    ...(options.shutdown ? { shutdown: options.shutdown } : {}),
  });
  const progress = runProgressUpdates({ deps, runId, intervalMs: options.progressIntervalMs ?? 15_000 });
  const provider = options.clusters?.();
  try {
    return await withRunClusters(
      { deps, started, provider, executor: options.executor, stop, progress },
      async (clusters) => {
        const context: ExecuteContext = {
          deps,
          runId,
          started,
          options,
          shardSettings: {
            testTimeoutMs: options.testTimeoutMs ?? 15 * 60_000,
            retries: options.retries ?? 1,
          },
          stop,
          progress,
          clusters,
        };
        const design = started.source.adaptive
          ? adaptiveDesign(started, clusterSourceTraits(provider))
          : undefined;
        const ran =
          design && "design" in design
            ? await runBatches(context, design.design, design.atOnce)
            : await runFixed(context);
        if (ran !== "finished") return await endRun(context, ran);
        // Cluster-hours end with the executions, not with the analysis.
        await clusters.release();
        const analyzing = await applyAndPublish(deps, runId, { type: "analyzing" });
        if (!analyzing) return "done";
        await analyzeAndConclude({
          deps,
          analyze: options.analyze,
          run: analyzing,
          notes: design && "fixed" in design ? [design.fixed] : [],
          dataDir: options.dataDir,
          ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
        });
        return "done";
      },
    );
  } catch (error) {
    deps.log.error({ err: error }, "run failed");
    await applyAndPublish(deps, runId, {
      type: "concluded",
      conclusion: "failure",
      reason: `the run failed: ${error instanceof Error ? error.message : String(error)}`,
    });
    return "done";
  } finally {
    stop.dispose();
    await progress.flush();
  }
}

/** A fixed run's iterations: one shard on the run's clusters, unless it finished before (a resumed run). */
async function runFixed(context: ExecuteContext): Promise<"finished" | StepEnd> {
  const { started, clusters } = context;
  const iterations = { first: started.firstIteration, count: started.options.iterations };
  const shard = shardOfRun({ run: started, iterations, plan: started.plan!, ...context.shardSettings });
  if (started.results.some((s) => s.id === shard.id)) return "finished";
  const held = await clusters.hold(shard, started.source.clusters ?? DEFAULT_CLUSTERS_PER_ARM, false);
  if (held !== "held") return held;
  return executeShard(context, shard, clusters.held);
}

/**
 * Concludes a run whose step could not go on — its clusters given back first — with the step's
 * failure, or as timed out or cancelled when its signal stopped it; "interrupted" when this
 * process is stopping (the run resumes elsewhere, unconcluded).
 */
async function endRun(context: ExecuteContext, end: StepEnd): Promise<"done" | "interrupted"> {
  if (end === "ended") return "done";
  const stopped = end === "stopped" ? context.stop.stopped() : undefined;
  if (stopped?.kind === "shutdown") return "interrupted";
  const { conclusion, reason } =
    end !== "stopped"
      ? { conclusion: "failure" as const, reason: end.failure }
      : stopped?.kind === "timed out"
        ? {
            conclusion: "timed_out" as const,
            reason: `the run took longer than ${context.started.source.timeoutMinutes} minutes`,
          }
        : { conclusion: "cancelled" as const, reason: stopped?.message ?? "cancelled" };
  await context.clusters.release();
  await applyAndPublish(context.deps, context.runId, { type: "concluded", conclusion, reason });
  return "done";
}
