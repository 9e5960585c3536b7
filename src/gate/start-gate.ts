import type { RunDeps } from "../queue/run-deps.ts";
import { requeueRun } from "../queue/requeue-run.ts";
import { gateRunRecord, type GateRunSettings } from "./gate-run-record.ts";
import type { GateStore, StoredGate } from "./gate-store.ts";
import { readGate, type GateWithRuns } from "./read-gate.ts";

/** What starting a gate came to: the gate that stands (undefined: it expired meanwhile). */
export interface StartedGate {
  id: string;
  /** This request stored the gate (false: it joined the identical active one). */
  created: boolean;
  found: GateWithRuns | undefined;
}

/**
 * Starts a gate, or joins the identical active one. The gate and its runs are stored in one atomic
 * step, then every active run of the gate that stands is put on its stage's queue. Queueing adds
 * nothing to a run already queued (job ids derive from run ids), so when it fails or the process
 * stops before it, the request sent again (it joins the gate) queues what is missing, and so does
 * every worker tier's start-up reconciliation (requeueActiveRuns). Reading a gate never has to.
 */
export async function startGate(
  deps: {
    gates: Pick<GateStore, "createOrJoin" | "get">;
    runs: Pick<RunDeps, "store" | "queues">;
    runSettings: GateRunSettings;
    now: () => Date;
  },
  gate: StoredGate,
): Promise<StartedGate> {
  const now = deps.now();
  const records = gate.arches.map((arch) => gateRunRecord({ gate, arch, settings: deps.runSettings, now }));
  const { id, created } = await deps.gates.createOrJoin(gate, records);
  // A created gate is what was just stored, atomically: no need to read it back.
  const found = created
    ? { gate, runs: records.map((run) => ({ arch: run.arch, run })) }
    : await readGate({ gates: deps.gates, runs: deps.runs.store }, id);
  for (const { run } of found?.runs ?? []) {
    if (run && run.state !== "completed") await requeueRun(deps.runs.queues, run, now);
  }
  return { id, created, found };
}
