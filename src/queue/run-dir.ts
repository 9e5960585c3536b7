import { join } from "node:path";

/** Where a run's files live: its shard's results under shards/, its report under report/. */
export function runDir(dataDir: string, runId: string): string {
  return join(dataDir, "runs", runId);
}
