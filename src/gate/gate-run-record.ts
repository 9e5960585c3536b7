import type { Arch } from "@netstress/core/arch/arch.ts";
import { queuedRun } from "../runs/queued-run.ts";
import type { GateRun } from "../runs/run-record.ts";
import { gateRunId, type StoredGate } from "./gate-store.ts";

/** How every gate run runs (the operator's gate settings). */
export interface GateRunSettings {
  /** Tests running at once in a gate run. */
  parallel: number;
  /** A gate run still going after this long (from its first start) ends Inconclusive. */
  timeoutMinutes: number;
}

/**
 * The run of one arch of a gate, as accepted: the candidate as the "pr" arm against the baseline
 * payload, or — when the candidate is the baseline (the stream's latest) — against the stream's
 * history pool. Its id derives from the gate and arch, so accepting it twice finds the first.
 */
export function gateRunRecord(input: {
  gate: StoredGate;
  arch: Arch;
  settings: GateRunSettings;
  now: Date;
}): GateRun {
  const { gate, arch, settings } = input;
  const id = gateRunId(gate.id, arch);
  return queuedRun<GateRun>(
    {
      id,
      subject: {
        kind: "gate",
        gateId: gate.id,
        payload: gate.payload,
        baselinePayload: gate.baselinePayload,
      },
      arch,
      options: {
        iterations: gate.iterations,
        baseline: gate.baselinePayload === gate.payload ? "history" : "payload",
      },
      source: {
        tags: [],
        payload: gate.payload,
        releaseStream: gate.stream,
        ...(gate.capabilities?.length ? { capabilities: gate.capabilities } : {}),
        parallel: settings.parallel,
        ...(gate.clusters !== undefined ? { clusters: gate.clusters } : {}),
        timeoutMinutes: settings.timeoutMinutes,
        imageWaitMinutes: 0,
      },
      dedupeKey: `gate:${id}`,
    },
    input.now,
  );
}
