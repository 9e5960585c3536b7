import type { RunProgress } from "../runner/run-plan.ts";

/**
 * One progress for shards that run at once (a crossover batch's halves, each on an executor of
 * its own counting only its own executions): each shard's latest report, summed, goes to `report`
 * whenever one of them reports. Answers each shard's onProgress by its id.
 */
export function summedProgress(
  report: (progress: RunProgress) => void,
): (shardId: string) => (progress: RunProgress) => void {
  const latest = new Map<string, RunProgress>();
  return (shardId) => (progress) => {
    latest.set(shardId, progress);
    const sum: RunProgress = { done: 0, total: 0, failed: 0 };
    for (const p of latest.values()) {
      sum.done += p.done;
      sum.total += p.total;
      sum.failed += p.failed;
    }
    report(sum);
  };
}
