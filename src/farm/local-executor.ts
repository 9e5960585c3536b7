import { join } from "node:path";
import type { Arch } from "../arch/arch.ts";
import { binaryEnvironment } from "../runner/binary-environment.ts";
import { executeRun } from "../runner/execute-run.ts";
import type { ExecuteShardInput, ShardExecutor, ShardOutcome } from "../runs/shard-executor.ts";
import { createLocalSandbox, UNPRIVILEGED } from "./local-sandbox.ts";

/**
 * The embedded default: runs each shard in this process with the runner, on this machine. It runs
 * the architectures it is told this machine can run (the host's, unless configured otherwise).
 * It is for trusted code: the binaries share this machine. Still, they get an allow-listed
 * environment (none of the bot's settings or secrets), a private working directory, and — when
 * the bot runs as root — an unprivileged user.
 */
export function createLocalExecutor(options: {
  arches: readonly Arch[];
  /** Unpacked binaries, shared by every shard so a binary is unpacked once. */
  cacheDir: string;
  /** The binaries' whole environment; absent: the allow-listed part of this process's. */
  env?: NodeJS.ProcessEnv;
  /** Who binaries run as; absent: UNPRIVILEGED when this process is root, else this process's user. */
  runAs?: { uid: number; gid: number };
}): ShardExecutor {
  const runAs = options.runAs ?? (process.getuid?.() === 0 ? UNPRIVILEGED : undefined);
  return {
    name: "local",
    arches: async () => options.arches,
    async execute({ shard, outDir, signal, onRecord, onProgress }: ExecuteShardInput): Promise<ShardOutcome> {
      const sandbox = await createLocalSandbox({ ...(runAs ? { runAs } : {}) });
      try {
        const { outcome, paths } = await executeRun({
          plan: shard.plan,
          outDir,
          cacheDir: sandbox.binDir ?? join(options.cacheDir, shard.arch),
          iterations: shard.iterations.count,
          firstIteration: shard.iterations.first,
          parallel: shard.parallel,
          ...(shard.networkParallel ? { networkParallel: shard.networkParallel } : {}),
          seed: shard.seed,
          timeoutMs: shard.testTimeoutMs,
          retries: shard.retries,
          focus: shard.focus,
          signal,
          env: options.env ?? binaryEnvironment(process.env, { home: sandbox.home }),
          sandbox: sandbox.spec,
          onRecord,
          onProgress,
        });
        return { status: outcome.status, resultsPath: paths.results, records: outcome.records };
      } catch (error) {
        return { status: "failed", reason: error instanceof Error ? error.message : String(error) };
      } finally {
        await sandbox.remove();
      }
    },
  };
}
