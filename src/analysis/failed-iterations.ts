import type { ArmCounts } from "./types.ts";

/**
 * Iterations with any failed attempt. A flaked iteration counts as failed for regression testing:
 * a stress run exists to expose unreliability, and a retry that hides a failure hides exactly that.
 */
export function failedIterations(counts: Pick<ArmCounts, "failures" | "flakes">): number {
  return counts.failures + counts.flakes;
}
