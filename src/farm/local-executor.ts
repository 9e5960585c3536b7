import { join } from "node:path";
import type { Arch } from "../arch/arch.ts";
import { executeRun } from "../runner/execute-run.ts";
import type { ExecuteShardInput, ShardExecutor, ShardOutcome } from "../runs/shard-executor.ts";

/**
 * The embedded default: runs each shard in this process with the runner, on this machine. It runs
 * the architectures it is told this machine can run (the host's, unless configured otherwise).
 */
export function createLocalExecutor(options: {
  arches: readonly Arch[];
  /** Unpacked binaries, shared by every shard so a binary is unpacked once. */
  cacheDir: string;
  env?: NodeJS.ProcessEnv;
}): ShardExecutor {
  return {
    name: "local",
    arches: async () => options.arches,
    async execute({ shard, outDir, signal, onRecord, onProgress }: ExecuteShardInput): Promise<ShardOutcome> {
      try {
        const { outcome, paths } = await executeRun({
          plan: shard.plan,
          outDir,
          cacheDir: join(options.cacheDir, shard.arch),
          iterations: shard.iterations.count,
          firstIteration: shard.iterations.first,
          parallel: shard.parallel,
          ...(shard.networkParallel ? { networkParallel: shard.networkParallel } : {}),
          seed: shard.seed,
          timeoutMs: shard.testTimeoutMs,
          retries: shard.retries,
          focus: shard.focus,
          signal,
          env: options.env,
          onRecord,
          onProgress,
        });
        return { status: outcome.status, resultsPath: paths.results, records: outcome.records };
      } catch (error) {
        return { status: "failed", reason: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}
