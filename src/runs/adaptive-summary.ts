import type { AdaptiveSummary } from "../report/adaptive-test-rows.ts";
import { batchResults } from "./batch-results.ts";
import { clusterHours } from "./cluster-hours.ts";
import type { RunRecord } from "./run-record.ts";

/** What a report shows of an adaptive run that decided at least once; undefined otherwise. */
export function adaptiveSummary(run: RunRecord, now: Date): AdaptiveSummary | undefined {
  const state = run.adaptive;
  if (!state?.decision) return undefined;
  const finished = state.batches.filter((b) => batchResults(run, b).finished);
  return {
    design: state.design,
    batches: finished.length,
    tests: state.decision.tests,
    stopped: state.decision.stopped,
    spent: state.decision.spent,
    budget: state.budget ?? state.decision.spent,
    target: state.decision.target,
    method: state.decision.method,
    ...(state.decision.notes?.length ? { notes: state.decision.notes } : {}),
    ...(run.clusters?.length ? { clusterHours: clusterHours(run.clusters, now) } : {}),
    ...(state.upgrades?.length
      ? {
          upgrades: state.upgrades.map((u) => ({
            id: u.id,
            minutes: (Date.parse(u.finishedAt) - Date.parse(u.startedAt)) / 60_000,
            ...(u.failed ? { failed: u.failed } : {}),
          })),
        }
      : {}),
  };
}
