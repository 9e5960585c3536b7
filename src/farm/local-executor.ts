import { randomBytes } from "node:crypto";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { fetchPlanBinaries } from "../payload/fetch-plan-binaries.ts";
import type { Registry } from "../registry/create-registry.ts";
import { binaryEnvironment } from "../runner/binary-environment.ts";
import { roundRobinClusters } from "../runner/execution-cluster.ts";
import { executeRun, RUN_FILES } from "../runner/execute-run.ts";
import type { ExecuteShardInput, ShardExecutor, ShardOutcome } from "../runs/shard-executor.ts";
import { createLocalSandbox, UNPRIVILEGED } from "./local-sandbox.ts";
import { writeClusterKubeconfigs } from "./write-cluster-kubeconfigs.ts";

/**
 * The embedded default: runs each shard in this process with the runner, on this machine. It runs
 * the architectures it is told this machine can run (the host's, unless configured otherwise).
 * The binaries a plan names by image it fetches for the shard's arch, the one executor that does:
 * they run here. It is for trusted code: the binaries share this machine. Still, they get an
 * allow-listed environment (none of the bot's settings or secrets), a private working directory,
 * and — when the bot runs as root — an unprivileged user. With clusters under test, each one's
 * kubeconfig is a file in the sandbox (0600) that KUBECONFIG points at, removed when the shard ends.
 */
export function createLocalExecutor(options: {
  arches: readonly Arch[];
  /** Unpacked binaries, shared by every shard so a binary is unpacked once. */
  cacheDir: string;
  /**
   * Where binaries named by their image are fetched from (the registry, through its content
   * cache) and linked into (`outDir`, by content digest, where retention sweeps them).
   */
  images: { registry: Registry; outDir: string };
  /** The binaries' whole environment; absent: the allow-listed part of this process's. */
  env?: NodeJS.ProcessEnv;
  /** Who binaries run as; absent: UNPRIVILEGED when this process is root, else this process's user. */
  runAs?: { uid: number; gid: number };
  /** Told when tests start with Node's spawn instead of the process spawner, and why. */
  onNotice?: (message: string) => void;
}): ShardExecutor {
  const runAs = options.runAs ?? (process.getuid?.() === 0 ? UNPRIVILEGED : undefined);
  return {
    name: "local",
    arches: async () => options.arches,
    async execute(input: ExecuteShardInput): Promise<ShardOutcome> {
      const { shard, outDir, signal, onRecord, onProgress } = input;
      const sandbox = await createLocalSandbox({ ...(runAs ? { runAs } : {}) });
      // The clusters' kubeconfigs live in the sandbox, readable by the binaries' user alone.
      const kubeconfigDir = join(sandbox.home, ".clusters-under-test");
      // Records stream into files of this execution's own, renamed over results.jsonl (junit.xml,
      // run.json) once whole: another execution of the shard in the same directory (a stalled job
      // resumed while this one lives) must never see them half written, nor write into them.
      const own = randomBytes(4).toString("hex");
      const partial = (name: string) => join(outDir, `${name}.${own}.partial`);
      const paths = {
        results: partial(RUN_FILES.results),
        junit: partial(RUN_FILES.junit),
        manifest: partial(RUN_FILES.manifest),
      };
      try {
        const clusters = input.clusters
          ? roundRobinClusters(
              await writeClusterKubeconfigs({
                leases: input.clusters,
                dir: kubeconfigDir,
                ...(runAs ? { owner: runAs } : {}),
              }),
              // Each test execution chooses its cluster as it starts, and runs at most its timeout.
              shard.testTimeoutMs,
            )
          : undefined;
        const plan = await fetchPlanBinaries({
          plan: shard.plan,
          registry: options.images.registry.withBudget({ signal }),
          outDir: options.images.outDir,
        });
        const { outcome } = await executeRun({
          plan,
          outDir,
          paths,
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
          ...(clusters ? { clusters } : {}),
          onRecord,
          onProgress,
          ...(options.onNotice ? { onNotice: options.onNotice } : {}),
        });
        for (const key of ["junit", "manifest", "results"] as const)
          await rename(paths[key], join(outDir, RUN_FILES[key]));
        return {
          status: outcome.status,
          resultsPath: join(outDir, RUN_FILES.results),
          records: outcome.records,
        };
      } catch (error) {
        return { status: "failed", reason: error instanceof Error ? error.message : String(error) };
      } finally {
        await Promise.all(Object.values(paths).map((path) => rm(path, { force: true })));
        await rm(kubeconfigDir, { recursive: true, force: true });
        await sandbox.remove();
      }
    },
  };
}
