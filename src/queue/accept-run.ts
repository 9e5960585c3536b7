import type { RunRecord } from "../runs/run-record.ts";
import type { RunDeps } from "./run-deps.ts";

/**
 * Accepts a run of any subject: records it, tells its subject (a PR's queued check run) and queues
 * its resolution. While an active run has the same dedupe key, that run is returned instead
 * (`created` false). Accepting a record again (a retried intake, a re-read gate) finds the run it
 * made and makes sure it is shown and queued; queue job ids derive from run ids, so nothing doubles.
 */
export async function acceptRun(
  deps: RunDeps,
  record: RunRecord,
): Promise<{ run: RunRecord; created: boolean }> {
  const { run } = await deps.store.create(record);
  if (run.id !== record.id) return { run, created: false };
  const shown = (await deps.publish(run)) ?? run;
  await deps.queues.enqueueResolve(run.id);
  return { run: shown, created: true };
}
