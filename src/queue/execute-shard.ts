import { rm } from "node:fs/promises";
import type { ArmLeases } from "../runs/clusters-under-test.ts";
import { runWording } from "../runs/run-wording.ts";
import type { Shard } from "../runs/shard-executor.ts";
import type { ExecuteContext } from "./execute-context.ts";
import { runDir } from "./run-dir.ts";
import { shardAttemptDir } from "./shard-attempt-dir.ts";
import type { StepEnd } from "./step-end.ts";

/**
 * Runs one shard through the executor (on `clusters` when a cluster source serves the run) with
 * live progress, in a directory of this execution's own, and saves its results: "finished" once
 * saved. Results the run does not keep (cancelled, or another worker's were saved first) are removed.
 */
export async function executeShard(
  context: ExecuteContext,
  shard: Shard,
  clusters: ArmLeases | undefined,
): Promise<"finished" | StepEnd> {
  const { deps, runId, started, options, stop, progress } = context;
  const { executor } = options;
  const outDir = shardAttemptDir(runDir(options.dataDir, runId), shard.id);
  const discard = () => rm(outDir, { recursive: true, force: true });
  const outcome = await executor.execute({
    shard,
    outDir,
    signal: stop.signal,
    ...(clusters ? { clusters } : {}),
    onProgress: (p) => progress.executions(p),
  });
  await progress.flush();
  if (outcome.status === "failed") {
    return {
      failure: runWording.executorFailed(started, {
        executor: executor.name,
        shardId: shard.id,
        reason: outcome.reason,
      }),
    };
  }
  if (outcome.status === "cancelled") {
    await discard();
    return "stopped";
  }
  const finished = {
    id: shard.id,
    resultsPath: outcome.resultsPath,
    ...shard.iterations,
    ...(outcome.lost ? { lost: outcome.lost } : {}),
    ...(outcome.armsIsolated ? { armsIsolated: true } : {}),
  };
  if (!(await deps.store.apply(runId, { type: "results-finished", results: finished }))) {
    await discard();
    return "ended";
  }
  return "finished";
}
