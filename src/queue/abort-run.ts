import { publishRun, type RunDeps } from "./run-deps.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * Ends a run as cancelled with the reason on its check run, and stops its execution wherever it
 * runs. A run that already concluded is left alone (undefined).
 */
export async function abortRun(deps: RunDeps, runId: string, reason: string): Promise<RunRecord | undefined> {
  const run = await deps.store.apply(runId, { type: "concluded", conclusion: "cancelled", reason });
  if (!run) return undefined;
  await deps.abortBus.publish(runId, reason);
  return (await publishRun(deps, run)) ?? run;
}
