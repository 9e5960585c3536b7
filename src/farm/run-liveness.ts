import { gateIdOfRun } from "../gate/gate-run-id.ts";
import type { GateStore } from "../gate/gate-store.ts";
import type { RunRecord } from "../queue/run-record.ts";

/**
 * Whether the run a farm Job belongs to is still going, for start-up reconciliation. PR runs and
 * gates share the farms: a PR run lives until it completes, a gate as long as one of its arches
 * has not completed (its worker resumes the arch and adopts the Jobs).
 */
export function createRunLiveness(stores: {
  runs: { get(id: string): Promise<RunRecord | undefined> };
  gates: Pick<GateStore, "get">;
}): (runId: string) => Promise<boolean> {
  return async (runId) => {
    const gateId = gateIdOfRun(runId);
    if (gateId !== undefined) {
      const gate = await stores.gates.get(gateId);
      return gate !== undefined && gate.arches.some((arch) => arch.state !== "completed");
    }
    const run = await stores.runs.get(runId);
    return run !== undefined && run.state !== "completed";
  };
}
