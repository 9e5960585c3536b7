import type { Arch } from "@netstress/core/arch/arch.ts";
import type { PrRun } from "../runs/run-record.ts";

/** The newest run per arch among runs of one commit (runs come newest first, as the store lists them). */
export function latestRunsByArch(runs: readonly PrRun[], headSha: string): Map<Arch, PrRun> {
  const latest = new Map<Arch, PrRun>();
  for (const run of runs) {
    if (run.subject.headSha === headSha && !latest.has(run.arch)) latest.set(run.arch, run);
  }
  return latest;
}
