import type { RunRecord } from "./run-record.ts";

/** What a run is asked to do; the rest of its record is the same for every new run. */
export type RunRequest<R extends RunRecord> = Omit<
  R,
  "state" | "revision" | "createdAt" | "updatedAt" | "results" | "firstIteration"
> &
  Partial<Pick<R, "results" | "firstIteration">>;

/** A run as accepted, of any subject: queued, at revision 0, with no results of its own yet. */
export function queuedRun<R extends RunRecord>(request: RunRequest<R>, at: Date): R {
  const now = at.toISOString();
  const run: RunRecord = {
    firstIteration: 0,
    results: [],
    ...request,
    state: "queued",
    revision: 0,
    createdAt: now,
    updatedAt: now,
  };
  // The request carries R's subject; the fields added here are the same for every subject.
  return run as R;
}
