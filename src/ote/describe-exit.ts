import type { InvokeBinaryOutcome } from "./invoke-binary.ts";

/** One phrase saying how an invocation ended, for error messages. */
export function describeExit(outcome: InvokeBinaryOutcome, timeoutMs: number): string {
  if (outcome.spawnError)
    return `could not be started (${outcome.spawnError.code ?? outcome.spawnError.message})`;
  if (outcome.lost) return `was lost: ${outcome.lost}`;
  if (outcome.aborted) return "was cancelled";
  if (outcome.timedOut) {
    const ended = outcome.signal ? `was killed by ${outcome.signal}` : `exited with code ${outcome.exitCode}`;
    return `timed out after ${formatSeconds(timeoutMs)} and was interrupted (it then ${ended})`;
  }
  if (outcome.outputLimitExceeded) return "wrote more output than the limit and was killed";
  if (outcome.signal) return `was killed by ${outcome.signal}`;
  return `exited with code ${outcome.exitCode}`;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
