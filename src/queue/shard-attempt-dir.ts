import { randomBytes } from "node:crypto";
import { join } from "node:path";

/**
 * A directory of its own for one execution of a shard: `<run dir>/shards/<shard id>.<attempt>`. Two
 * workers can execute one shard at once (a stalled job resumed elsewhere while its first worker
 * lives); the results the run records are the first finisher's, and the other must not write over
 * them while they are analyzed.
 */
export function shardAttemptDir(runDir: string, shardId: string): string {
  return join(runDir, "shards", `${shardId}.${randomBytes(4).toString("hex")}`);
}
