import type { RunRecord } from "../runs/run-record.ts";
import type { RunDeps } from "./run-deps.ts";

/**
 * Ends a run as cancelled with the reason, stops its execution wherever it runs, and tells its
 * subject. A run that already concluded is left alone (undefined).
 */
export async function abortRun(deps: RunDeps, runId: string, reason: string): Promise<RunRecord | undefined> {
  const run = await deps.store.apply(runId, { type: "concluded", conclusion: "cancelled", reason });
  if (!run) return undefined;
  await deps.abortBus.publish(runId, reason);
  return (await deps.publish(run)) ?? run;
}
