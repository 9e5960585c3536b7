import type { Arch } from "../arch/arch.ts";
import type { RunRecord } from "./run-record.ts";

/** The newest run per arch among runs of one commit (runs come newest first, as the store lists them). */
export function latestRunsByArch(runs: readonly RunRecord[], headSha: string): Map<Arch, RunRecord> {
  const latest = new Map<Arch, RunRecord>();
  for (const run of runs) {
    if (run.headSha === headSha && !latest.has(run.arch)) latest.set(run.arch, run);
  }
  return latest;
}
