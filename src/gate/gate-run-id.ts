/**
 * The run id a gate's shards carry on the executor (and in their Jobs' annotations): start-up
 * reconciliation tells a gate's Jobs from a PR run's by it.
 */
const GATE_RUN_PREFIX = "gate-";

export function gateRunId(gateId: string): string {
  return `${GATE_RUN_PREFIX}${gateId}`;
}

/** The gate a run id belongs to; undefined for a PR run (whose ids are hex digests). */
export function gateIdOfRun(runId: string): string | undefined {
  return runId.startsWith(GATE_RUN_PREFIX) ? runId.slice(GATE_RUN_PREFIX.length) : undefined;
}
