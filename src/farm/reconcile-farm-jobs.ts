import type { Logger } from "pino";
import type { FarmExecutor } from "./farm-executor.ts";
import { readJobIdentity } from "./job-identity.ts";
import { runKey } from "@netstress/core/kube/netstress-labels.ts";

export interface FarmReconciliation {
  /** Jobs of active runs whose capacity is held until their run resumes and adopts them. */
  adopted: number;
  /** Jobs of runs that ended (or are unknown) while no bot was watching, now deleted. */
  deleted: number;
  /** Clusters not listed in time; their Jobs are adopted when their runs resume. */
  unreachable: string[];
}

/**
 * At start-up, squares the clusters with the run records. A Job whose run is still active keeps
 * running, and its capacity is counted at once (the lease lapses unless the resumed run adopts
 * it; its results, finished or not, are collected then). A Job whose run concluded or vanished
 * while the bot was down — aborted, timed out — is deleted with its pods.
 */
export async function reconcileFarmJobs(deps: {
  executor: FarmExecutor;
  /** Whether a run (a PR run or a gate) is still going, so its Jobs are to be kept. */
  isRunActive(runId: string): Promise<boolean>;
  logger: Logger;
  listTimeoutMs?: number;
}): Promise<FarmReconciliation> {
  const { executor, logger } = deps;
  const result: FarmReconciliation = { adopted: 0, deleted: 0, unreachable: [] };
  const states = new Map<string, Promise<boolean>>();
  const active = (runId: string) => {
    let state = states.get(runId);
    if (!state)
      states.set(
        runId,
        (state = deps.isRunActive(runId).catch((error: unknown) => {
          // A run that cannot be read is not known to have ended: its Jobs stay (their TTL bounds them).
          logger.warn({ runId, err: error }, "run state unreadable; its jobs are kept");
          return true;
        })),
      );
    return state;
  };
  for (const runtime of executor.runtimes()) {
    const listed = await Promise.race([
      runtime.ready.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), deps.listTimeoutMs ?? 30_000).unref()),
    ]);
    if (!listed) {
      result.unreachable.push(runtime.name);
      continue;
    }
    for (const job of [...runtime.jobs()]) {
      const identity = job.metadata ? readJobIdentity(job.metadata) : undefined;
      const name = job.metadata?.name;
      if (!identity || !name) continue;
      const lease = { cluster: runtime.name, runKey: runKey(identity.runId), id: name };
      if (await active(identity.runId)) {
        const finished = job.status?.conditions?.some(
          (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
        );
        if (!finished) await executor.holdCapacity(lease);
        result.adopted += 1;
        continue;
      }
      try {
        await runtime.client.deleteJob(name);
        await executor.releaseCapacity(lease);
        result.deleted += 1;
      } catch (error) {
        logger.warn(
          { cluster: runtime.name, job: name, err: error },
          "orphaned job not deleted; its TTL will",
        );
      }
    }
  }
  logger.info(result, "build-farm jobs reconciled");
  return result;
}
