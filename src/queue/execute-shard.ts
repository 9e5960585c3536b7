import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { RunProgress } from "../runner/run-plan.ts";
import type { ArmLeases } from "../runs/clusters-under-test.ts";
import { runWording } from "../runs/run-wording.ts";
import type { Shard } from "../runs/shard-executor.ts";
import type { ExecuteContext } from "./execute-context.ts";
import { keepResults } from "./keep-results.ts";
import { runDir } from "./run-dir.ts";
import type { StepEnd } from "./step-end.ts";

/**
 * Runs one shard through the executor (on `clusters` when a cluster source serves the run) with
 * live progress — the run's, unless `onProgress` takes it (shards that run at once) — and saves its
 * results — a copy of this execution's own (keepResults), removed again when another execution's
 * were saved first: "finished" once saved.
 */
export async function executeShard(
  context: ExecuteContext,
  shard: Shard,
  clusters: ArmLeases | undefined,
  onProgress: (progress: RunProgress) => void = (p) => context.progress.executions(p),
): Promise<"finished" | StepEnd> {
  const { deps, runId, started, options, stop, progress } = context;
  const { executor } = options;
  const outcome = await executor.execute({
    shard,
    outDir: join(runDir(options.dataDir, runId), "shards", shard.id),
    signal: stop.signal,
    ...(clusters ? { clusters } : {}),
    onProgress,
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
  if (outcome.status === "cancelled") return "stopped";
  const resultsPath = await keepResults(outcome.resultsPath);
  const finished = {
    id: shard.id,
    resultsPath,
    ...shard.iterations,
    ...(outcome.lost ? { lost: outcome.lost } : {}),
    ...(outcome.armsIsolated ? { armsIsolated: true } : {}),
  };
  if (!(await deps.store.apply(runId, { type: "results-finished", results: finished }))) {
    await rm(resultsPath, { force: true });
    return "ended";
  }
  return "finished";
}
