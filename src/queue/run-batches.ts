import { readAllResultRecords } from "../runner/read-all-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { adaptiveSavedState } from "../runs/adaptive-saved-state.ts";
import { adaptiveStep } from "../runs/adaptive-step.ts";
import { batchPlan } from "../runs/batch-plan.ts";
import { listedTests } from "../runs/listed-tests.ts";
import type { AdaptiveBatch, RunRecord } from "../runs/run-record.ts";
import type { ExecuteContext } from "./execute-context.ts";
import { executeShard } from "./execute-shard.ts";
import { applyAndPublish } from "./run-deps.ts";
import { shardOfRun } from "./shard-of-run.ts";
import type { StepEnd } from "./step-end.ts";

/**
 * An adaptive run's batches on shared clusters: after each finished one the decision step says
 * per test where it stands and what runs next. Each batch is saved before it runs and each
 * decision after, so a resumed run goes on with the batch it was running, on the clusters it held;
 * a decision keeps what the next ones need, so no batch's results are read twice. "finished" once
 * no batch is left.
 */
export async function runBatches(context: ExecuteContext): Promise<"finished" | StepEnd> {
  const { deps, runId, clusters } = context;
  for (;;) {
    const run = await deps.store.get(runId);
    if (!run || run.state !== "running") return "ended";
    const planned = run.adaptive?.batches ?? [];
    let batch = planned.find((b) => !resultsOf(run, b));
    let decision = run.adaptive?.decision;
    if (!batch) {
      const step = adaptiveStep(run, await finishedBatches(run, adaptiveSavedState(run)?.batches ?? 0));
      if (step.decided) {
        await applyAndPublish(deps, runId, { type: "batch-decided", ...step.decided });
        decision = step.decided.decision;
      }
      if (!step.next) {
        if (step.decided) return "finished";
        return {
          failure: `the budget of ${run.source.adaptive!.budgetIterations} iterations cannot pay for a first batch of the decision step: raise budget`,
        };
      }
      batch = step.next;
      const saved = await deps.store.apply(runId, {
        type: "batch-planned",
        design: "shared clusters",
        batch,
      });
      if (!saved) return "ended";
    }
    // The plan of a batch is cut from what the decision that asked for it kept (a decision saved
    // before decisions kept it: from every finished batch).
    const listed = decision?.planning?.listed ?? listedTests([], (await finishedBatches(run, 0)).flat());
    const plan = batchPlan(run.plan!, batch, listed);
    const next = shardOfRun({ run, iterations: batch, plan, ...context.shardSettings });
    if (clusters.served && !clusters.held) {
      // The first batch of the run's own holds the most clusters: every later one runs on them.
      const own = [...planned, batch].filter((b) => b.first >= run.firstIteration);
      const held = await clusters.hold(next, Math.max(...own.map((b) => b.clusters)), true);
      if (held !== "held") return held;
    }
    const leases = clusters.held?.pr
      ?.toSorted((a, b) => a.cluster.id.localeCompare(b.cluster.id))
      .slice(0, batch.clusters);
    const ran = await executeShard(context, next, leases ? { pr: leases, baseline: leases } : undefined);
    if (ran !== "finished") return ran;
  }
}

function resultsOf(run: RunRecord, batch: AdaptiveBatch) {
  return run.results.find((r) => r.id === batch.shardId);
}

/** The records of the run's finished batches, oldest first; the first `read` are given empty, unread. */
async function finishedBatches(run: RunRecord, read: number): Promise<ResultRecord[][]> {
  const finished = (run.adaptive?.batches ?? []).flatMap((b) => resultsOf(run, b) ?? []);
  return Promise.all(
    finished.map(async (set, i) => (i < read ? [] : await readAllResultRecords(set.resultsPath))),
  );
}
