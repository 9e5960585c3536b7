import { randomBytes } from "node:crypto";
import { copyFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * A copy of a shard's results that only this execution has, beside them
 * (`results-<random>.jsonl`). Two workers can execute one shard at once (a stalled job resumed
 * elsewhere while its first worker lives) in the same directory, which is what lets a restarted
 * worker go on with the iterations already collected; the results the run records must not change
 * under their analysis when the other one finishes later. Executors write results.jsonl whole (a
 * temporary file renamed over it), so the copy is of one complete execution.
 */
export async function keepResults(resultsPath: string): Promise<string> {
  const kept = join(
    dirname(resultsPath),
    `${basename(resultsPath, ".jsonl")}-${randomBytes(4).toString("hex")}.jsonl`,
  );
  await copyFile(resultsPath, kept);
  return kept;
}
