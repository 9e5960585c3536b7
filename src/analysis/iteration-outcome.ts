/**
 * What happened to one test in one iteration of one arm, as bits, so that an arm's whole history
 * is one byte per iteration. Retries set more bits: a failed attempt followed by a passing retry
 * leaves PASSED | FAILED, which is a flake.
 */
export const OUTCOME = { PASSED: 1, FAILED: 2, SKIPPED: 4 } as const;

export type IterationOutcome = "passed" | "failed" | "flaked" | "skipped" | "absent";

export function describeOutcome(bits: number): IterationOutcome {
  const passed = (bits & OUTCOME.PASSED) !== 0;
  const failed = (bits & OUTCOME.FAILED) !== 0;
  if (failed) return passed ? "flaked" : "failed";
  if (passed) return "passed";
  return (bits & OUTCOME.SKIPPED) !== 0 ? "skipped" : "absent";
}
