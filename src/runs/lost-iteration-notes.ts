import type { LostIteration } from "./shard-executor.ts";

/** A report line per iteration the infrastructure kept losing, so the reader knows what is missing. */
export function lostIterationNotes(lost: readonly LostIteration[]): string[] {
  return lost.map(
    ({ iteration, reason }) =>
      `iteration ${iteration} was lost to the infrastructure on every attempt and is left out: ${reason}`,
  );
}
