import type { Gate, GateArch, GateVerdict } from "./gate-schemas.ts";
import type { StoredGate } from "./gate-store.ts";

/** Rejected if any arch is, else Inconclusive if any arch is, else Accepted. */
export function overallVerdict(verdicts: readonly (GateVerdict | undefined)[]): GateVerdict {
  if (verdicts.includes("Rejected")) return "Rejected";
  if (verdicts.every((verdict) => verdict === "Accepted")) return "Accepted";
  return "Inconclusive";
}

/** A gate as the API shows it (pure). */
export function gateView(gate: StoredGate, arches: readonly GateArch[], publicUrl: string): Gate {
  const completed = arches.every((arch) => arch.state === "completed");
  const state = completed
    ? "completed"
    : arches.every((arch) => arch.state === "queued")
      ? "queued"
      : "running";
  return {
    id: gate.id,
    state,
    ...(completed ? { verdict: overallVerdict(arches.map((arch) => arch.verdict)) } : {}),
    payload: gate.payload,
    baselinePayload: gate.baselinePayload,
    baselineSource: gate.baselineSource,
    ...(gate.baselineRelease ? { baselineRelease: gate.baselineRelease } : {}),
    stream: gate.stream,
    iterations: gate.iterations,
    ...(gate.capabilities ? { capabilities: gate.capabilities } : {}),
    arches: [...arches],
    createdAt: gate.createdAt,
    url: `${publicUrl}/api/v1/gates/${gate.id}`,
  };
}
