import type { PublishRun } from "../runs/run-publisher.ts";
import type { RunRecord } from "../runs/run-record.ts";
import type { GateStore } from "./gate-store.ts";
import { readGate } from "./read-gate.ts";

/**
 * Who is told about a gate's run: the gate record, which reads its state from its runs. All it
 * needs to hear is the end: once every arch's run completed, identical requests start a new gate.
 */
export function createGatePublisher(stores: {
  gates: GateStore;
  runs: { get(id: string): Promise<RunRecord | undefined> };
}): PublishRun {
  return async (run) => {
    if (run.subject.kind !== "gate" || run.state !== "completed") return run;
    // Each run is stored completed before it is published, so the last one to end sees all ended.
    const found = await readGate(stores, run.subject.gateId);
    if (found && found.runs.every(({ run: armRun }) => armRun?.state === "completed")) {
      await stores.gates.release(found.gate);
    }
    return run;
  };
}
