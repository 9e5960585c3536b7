import type { GateVerdict } from "../analysis/gate-verdict.ts";
import { powerLine } from "../runs/power-line.ts";
import type { GateRun } from "../runs/run-record.ts";
import { upgradingPhase } from "../runs/upgrading-phase.ts";
import type { Gate, GateArch } from "./gate-schemas.ts";
import type { GateWithRuns } from "./read-gate.ts";

/** Rejected if any arch is, else Inconclusive if any arch is, else Accepted. */
export function overallVerdict(verdicts: readonly (GateVerdict | undefined)[]): GateVerdict {
  if (verdicts.includes("Rejected")) return "Rejected";
  if (verdicts.every((verdict) => verdict === "Accepted")) return "Accepted";
  return "Inconclusive";
}

const ARCH_STATE = {
  queued: "queued",
  "waiting-for-images": "resolving",
  running: "running",
  analyzing: "analyzing",
  completed: "completed",
} as const satisfies Record<GateRun["state"], GateArch["state"]>;

/**
 * One arch of a gate as the API shows it, from its run (pure). A run that ended without an
 * analysis (the infrastructure failed, the deadline passed) is Inconclusive with its reason: an
 * infrastructure failure never rejects a payload.
 */
function archView(arch: GateArch["arch"], run: GateRun | undefined, reportUrl: string): GateArch {
  if (!run) return { arch, state: "queued", reasons: [] };
  const completed = run.state === "completed";
  const upgrading = upgradingPhase(run);
  return {
    arch,
    state: ARCH_STATE[run.state],
    ...(completed ? { verdict: run.decision?.verdict ?? "Inconclusive" } : {}),
    reasons: run.decision?.reasons ?? (run.reason ? [run.reason] : []),
    ...(run.reportPath ? { reportUrl } : {}),
    ...(run.progress ? { progress: run.progress } : {}),
    ...(upgrading ? { upgrading } : {}),
    ...(run.pool ? { history: run.pool } : {}),
    // Stored by the resolve stage: reading a gate never simulates.
    ...(run.power ? { power: { ...run.power, line: powerLine(run.power) } } : {}),
    ...(run.startedAt ? { startedAt: run.startedAt } : {}),
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
  };
}

/** A gate as the API shows it (pure). */
export function gateView({ gate, runs }: GateWithRuns, publicUrl: string): Gate {
  const arches = runs.map(({ arch, run }) =>
    archView(arch, run, `${publicUrl}/gates/${gate.id}/${arch}/report`),
  );
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
    ...(gate.clusters !== undefined ? { clusters: gate.clusters } : {}),
    arches,
    createdAt: gate.createdAt,
    url: `${publicUrl}/api/v1/gates/${gate.id}`,
  };
}
