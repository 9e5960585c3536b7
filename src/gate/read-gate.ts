import type { Arch } from "@netstress/core/arch/arch.ts";
import type { GateRun, RunRecord } from "../runs/run-record.ts";
import { gateRunId, type GateStore, type StoredGate } from "./gate-store.ts";

export interface GateWithRuns {
  gate: StoredGate;
  /** Per arch, in the gate's order; undefined: not accepted yet. */
  runs: { arch: Arch; run: GateRun | undefined }[];
}

/** A gate and the runs of its arches. */
export async function readGate(
  stores: { gates: Pick<GateStore, "get">; runs: { get(id: string): Promise<RunRecord | undefined> } },
  id: string,
): Promise<GateWithRuns | undefined> {
  const gate = await stores.gates.get(id);
  if (!gate) return undefined;
  const runs = await Promise.all(
    gate.arches.map(async (arch) => {
      const run = await stores.runs.get(gateRunId(gate.id, arch));
      return { arch, run: run?.subject.kind === "gate" ? (run as GateRun) : undefined };
    }),
  );
  return { gate, runs };
}
