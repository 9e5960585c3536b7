import type { AdaptiveBatch, ResultSet, RunRecord } from "./run-record.ts";

/**
 * The result sets of an adaptive batch's shards that finished (its halves' in a crossover, oldest
 * iterations first), and whether the batch is done: every shard finished, or — a crossover's PR
 * half — has no cluster left to run on (each upgrade it needed failed, and the cluster was given back).
 */
export function batchResults(
  run: RunRecord,
  batch: AdaptiveBatch,
): { results: ResultSet[]; finished: boolean } {
  const failed = new Set((run.adaptive?.upgrades ?? []).filter((u) => u.failed).map((u) => u.id));
  const shards = batch.halves ?? [{ shardId: batch.shardId, upgrade: undefined }];
  const results = shards.flatMap((s) => run.results.filter((r) => r.id === s.shardId));
  const finished = shards.every(
    (s) =>
      run.results.some((r) => r.id === s.shardId) ||
      (s.upgrade !== undefined && s.upgrade.every((id) => failed.has(id))),
  );
  return { results, finished };
}
