import type { AdaptiveSummary } from "../report/adaptive-test-rows.ts";
import { clusterHours } from "./cluster-hours.ts";
import type { RunRecord } from "./run-record.ts";

/** What a report shows of an adaptive run that decided at least once; undefined otherwise. */
export function adaptiveSummary(run: RunRecord, now: Date): AdaptiveSummary | undefined {
  const state = run.adaptive;
  if (!state?.decision) return undefined;
  const finished = state.batches.filter((b) => run.results.some((r) => r.id === b.shardId));
  return {
    design: state.design,
    batches: finished.length,
    tests: state.decision.tests,
    stopped: state.decision.stopped,
    spent: state.decision.spent,
    budget: state.budget ?? state.decision.spent,
    target: state.decision.target,
    method: state.decision.method,
    ...(run.clusters?.length ? { clusterHours: clusterHours(run.clusters, now) } : {}),
  };
}
