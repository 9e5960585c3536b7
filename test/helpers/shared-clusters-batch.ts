import type { AdaptiveBatch } from "../../src/runs/run-record.ts";

/** A shared-clusters batch as the decision step plans it: 3 clusters × 2 iterations, from `first`. */
export function sharedClustersBatch(first: number): AdaptiveBatch {
  return { shardId: `amd64-${first}-${first + 5}`, first, count: 6, clusters: 3, iterationsPerCluster: 2 };
}
