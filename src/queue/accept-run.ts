import type { RunRecord } from "../runs/run-record.ts";
import type { RunDeps } from "./run-deps.ts";

/** What accepting a run record came to. */
export interface AcceptedRun {
  /** The run that stands: the record's, or its active twin. */
  run: RunRecord;
  /** This call stored the run (false when accepting it again, and for a twin). */
  created: boolean;
  /** An active run of another request with the same dedupe key stands instead of the record. */
  twin: boolean;
}

/**
 * Accepts a run of any subject: records it, tells its subject (a PR's queued check run) and queues
 * its resolution. While an active run has the same dedupe key, that run is returned instead.
 * Accepting a record again (a retried intake, a redelivery) finds the run it made, `created` false,
 * and makes sure it is shown and queued; queue job ids derive from run ids and the check run's id is
 * stored on the run, so nothing doubles.
 */
export async function acceptRun(deps: RunDeps, record: RunRecord): Promise<AcceptedRun> {
  const { run, created } = await deps.store.create(record);
  if (run.id !== record.id) return { run, created: false, twin: true };
  const shown = (await deps.publish(run)) ?? run;
  await deps.queues.enqueueResolve(run.id);
  return { run: shown, created, twin: false };
}
