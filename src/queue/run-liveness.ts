import { isActive, type RunRecord } from "../runs/run-record.ts";

/**
 * Whether the run a farm Job belongs to is still going, for start-up reconciliation: a run of any
 * subject lives until it completes (its worker resumes it and adopts the Jobs).
 */
export function createRunLiveness(runs: {
  get(id: string): Promise<RunRecord | undefined>;
}): (runId: string) => Promise<boolean> {
  return async (runId) => {
    const run = await runs.get(runId);
    return run !== undefined && isActive(run);
  };
}
