import type { DecideState } from "../analysis/decide-state.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * The decision step's state saved with an adaptive run's last decision, when that decision also
 * kept what the next batches are planned from: the batches it read (`state.batches`, oldest
 * first) are never read again. Undefined before the first decision, and for decisions saved before
 * they kept their planning (the next step reads every batch again).
 */
export function adaptiveSavedState(run: RunRecord): DecideState | undefined {
  const decision = run.adaptive?.decision;
  return decision?.planning ? decision.state : undefined;
}
