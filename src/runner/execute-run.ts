import { closeSync, openSync } from "node:fs";
import { chown, mkdir, rename, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isEmptyEnvironment, type OteEnvironment } from "@netstress/core/model/ote-environment.ts";
import { binaryEnvironment } from "./binary-environment.ts";
import { collectArtifacts } from "./collect-artifacts.ts";
import { ExecutionsJunit } from "./executions-junit.ts";
import { clustersByArm, roundRobinClusters } from "./execution-cluster.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { preparePlan } from "./prepare-plan.ts";
import { invokeBinary } from "../ote/invoke-binary.ts";
import { connectProcessSpawner, startProcessSpawner, type ProcessSpawner } from "./process-spawner.ts";
import { createProgressReporter } from "./progress-reporter.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { RunManifest } from "./run-manifest.ts";
import { runPlan, type RunOutcome, type RunPlanOptions, type RunProgress } from "./run-plan.ts";
import { RunnerError } from "./runner-error.ts";
import { writeAllSync } from "./write-all-sync.ts";

/** The scheduling settings are runPlan's; the rest concern the output directory. */
export interface ExecuteRunOptions extends Omit<
  RunPlanOptions,
  "prepared" | "onRecord" | "onProgress" | "iterations" | "parallel" | "timeoutMs"
> {
  plan: ExecutionPlan;
  /**
   * How many times every test runs, how many run at once and each test's timeout. Unset, they come
   * from the selected suite's `count`, `parallelism` and `testTimeout`, as openshift-tests takes
   * them, else DEFAULT_RUN_SETTINGS.
   */
  iterations?: number;
  parallel?: number;
  timeoutMs?: number;
  outDir: string;
  /**
   * Where the records are streamed, the JUnit file and the manifest written; default RUN_FILES in
   * `outDir`.
   */
  paths?: Partial<ExecuteRunResult["paths"]>;
  /** Unpacked binaries; defaults to <outDir>/.bin. */
  cacheDir?: string;
  focus?: string;
  /** Where progress goes (stderr in the CLI); omitted means silent. */
  progressStream?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Sees each record as it is written (the in-pod runner streams them to stdout). */
  onRecord?: (record: ResultRecord) => void;
  /** Sees executions done/total as they finish (the bot's check runs show it). */
  onProgress?: (progress: RunProgress) => void;
  /** Told when tests cannot start from the process spawner, and why; default: the progress stream. */
  onNotice?: (message: string) => void;
  /** The process spawner; default the one built beside its source (SPAWNER_EXECUTABLE). */
  spawnerExecutable?: string;
  /**
   * Start every binary (`info`, `list` and the tests) through the process spawner listening on this
   * Unix socket (a build-farm pod's tests container), never in this process's container.
   */
  spawnerSocket?: string;
}

/** The files a run writes in its directory, unless told other paths (ExecuteRunOptions.paths). */
export const RUN_FILES = { results: "results.jsonl", junit: "junit.xml", manifest: "run.json" } as const;

export const DEFAULT_RUN_SETTINGS = { iterations: 10, parallel: 4, timeoutMs: 15 * 60_000 } as const;

/** Bounds on what the binaries leave in their artifact directories, per component and arm. */
const MAX_ARTIFACT_FILES = 200;
const MAX_ARTIFACT_BYTES = 64 * 1024 * 1024;

export interface ExecuteRunResult {
  outcome: RunOutcome;
  manifest: RunManifest;
  paths: { results: string; junit: string; manifest: string };
}

/**
 * A whole local run into a directory: results.jsonl (streamed as executions finish, so
 * an interrupted run keeps everything it observed), junit.xml, run.json with the plan, selection,
 * environment and status, and artifacts/<arm>/<component>/ (each binary's EXTENSION_ARTIFACT_DIR,
 * bounded). With clusters under test (or KUBECONFIG set) the cluster's environment is read from the
 * first one; the plan's environment values take precedence.
 */
export async function executeRun(options: ExecuteRunOptions): Promise<ExecuteRunResult> {
  // Test processes start from the small native spawner (see process-spawner.ts) unless told
  // otherwise. It starts while the binaries are unpacked; their `info` and `list` go through it too.
  const onNotice =
    options.onNotice ?? ((message: string) => options.progressStream?.write(`netstress: ${message}\n`));
  const spawning = options.start
    ? undefined
    : options.spawnerSocket !== undefined
      ? connectProcessSpawner({ socketPath: options.spawnerSocket, onNotice })
      : startProcessSpawner({
          ...(options.spawnerExecutable ? { executable: options.spawnerExecutable } : {}),
          onNotice,
        });
  // Settled here too: a spawner that cannot be reached fails the run once, wherever it is awaited.
  void spawning?.catch(() => {});
  try {
    const result = await executeWith({ ...options, onNotice }, spawning);
    const gone = (await spawning)?.gone;
    // Its tests were lost with it, not failed: the run is not a result.
    if (gone?.aborted) throw new RunnerError(`${String(gone.reason)}; the run is incomplete`);
    return result;
  } finally {
    await (await spawning?.catch(() => undefined))?.close();
  }
}

async function executeWith(
  options: ExecuteRunOptions,
  spawning: Promise<ProcessSpawner> | undefined,
): Promise<ExecuteRunResult> {
  const { outDir, plan } = options;
  const clusters =
    options.clusters ??
    (plan.clusters?.length ? roundRobinClusters(clustersByArm(plan.clusters)) : undefined);
  await mkdir(outDir, { recursive: true });
  const paths = {
    results: options.paths?.results ?? join(outDir, RUN_FILES.results),
    junit: options.paths?.junit ?? join(outDir, RUN_FILES.junit),
    manifest: options.paths?.manifest ?? join(outDir, RUN_FILES.manifest),
  };
  const selection = plan.selection ?? {};
  // With clusters under test, the first arm's first cluster tells the environment.
  const clusterKubeconfig = clusters?.({
    arm: plan.arms[0]!.arm,
    iteration: options.firstIteration ?? 0,
  }).kubeconfig;
  // The binaries' environment: what the caller chose, else only what binaryEnvironment allows.
  const env = options.env ?? binaryEnvironment(process.env);
  const { environment, environmentSource } = await resolveEnvironment(plan, env, clusterKubeconfig);
  // Absolute: a binary that changes directory still writes its artifacts here.
  const artifactsDir = resolve(outDir, "artifacts");
  const prepared = await preparePlan({
    plan,
    cacheDir: options.cacheDir ?? join(outDir, ".bin"),
    focus: options.focus,
    suite: selection.suite,
    includeDisruptive: selection.includeDisruptive,
    environment,
    artifactsDir,
    env,
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(spawning ? { invoke: async (o) => invokeBinary({ ...o, start: (await spawning).start }) } : {}),
  });
  // One binary shared by both arms warns once.
  for (const warning of new Set(prepared.components.flatMap((c) => c.listWarnings))) {
    options.onNotice?.(warning);
  }
  const settings = prepared.suiteSettings ?? {};
  const iterations = options.iterations ?? settings.count ?? DEFAULT_RUN_SETTINGS.iterations;
  const parallel = options.parallel ?? settings.parallelism ?? DEFAULT_RUN_SETTINGS.parallel;
  const timeoutMs = options.timeoutMs ?? settings.testTimeoutMs ?? DEFAULT_RUN_SETTINGS.timeoutMs;
  const sandboxUser = options.sandbox?.uid !== undefined ? options.sandbox : undefined;
  await Promise.all(
    prepared.components.map(async (c) => {
      if (!c.artifactDir) return;
      await mkdir(c.artifactDir, { recursive: true });
      // Binaries running as another user write their artifacts here.
      if (sandboxUser) await chown(c.artifactDir, sandboxUser.uid!, sandboxUser.gid ?? sandboxUser.uid!);
    }),
  );

  const manifest: RunManifest = {
    status: "running",
    arch: plan.arch,
    seed: options.seed,
    iterations,
    firstIteration: options.firstIteration ?? 0,
    parallel,
    retries: options.retries,
    timeoutMs,
    ...(options.networkParallel !== undefined ? { networkParallel: options.networkParallel } : {}),
    ...(options.focus ? { focus: options.focus } : {}),
    ...(selection.suite ? { suite: selection.suite } : {}),
    ...(prepared.suiteSettings ? { suiteSettings: prepared.suiteSettings } : {}),
    ...(selection.includeDisruptive ? { includeDisruptive: true } : {}),
    environment,
    environmentSource,
    startedAt: new Date().toISOString(),
    components: prepared.components.map((c) => ({
      arm: c.arm,
      component: c.component,
      binary: c.binary,
      sha256: c.sha256,
      ...(c.source ? { source: c.source } : {}),
      ...(c.image ? { image: c.image } : {}),
      ...(c.digest ? { digest: c.digest } : {}),
      ...(c.commit ? { commit: c.commit } : {}),
      ...(c.info ? { info: c.info } : {}),
      tests: c.selected.length,
      excluded: c.excluded,
      ...(c.listWarnings.length ? { listWarnings: c.listWarnings } : {}),
      alone: c.selected.flatMap((name) => {
        const reason = c.isolation.get(name)?.alone;
        return reason ? [{ name, reason }] : [];
      }),
    })),
  };
  await writeManifest(paths.manifest, manifest);

  // Records are appended synchronously: each is in the file before the run goes on, and a record
  // costs one write, not a round trip through the thread pool.
  const results = openSync(paths.results, "w");
  const junit = new ExecutionsJunit({ junitPath: paths.junit, arch: plan.arch });
  const progress = options.progressStream
    ? createProgressReporter({ stream: options.progressStream, label: `${plan.arch}: ` })
    : undefined;
  const spawner = await spawning;
  let outcome: RunOutcome;
  try {
    outcome = await runPlan({
      prepared,
      iterations,
      firstIteration: options.firstIteration,
      parallel,
      networkParallel: options.networkParallel,
      seed: options.seed,
      timeoutMs,
      ...(options.interruptGraceMs !== undefined ? { interruptGraceMs: options.interruptGraceMs } : {}),
      // A timeout given for the run is every test's; otherwise a spec's own hint comes first.
      useTimeoutHints: options.timeoutMs === undefined,
      retries: options.retries,
      ...(options.invariantGraceMs !== undefined ? { invariantGraceMs: options.invariantGraceMs } : {}),
      ...(options.invariantReadyMs !== undefined ? { invariantReadyMs: options.invariantReadyMs } : {}),
      // A spawner gone for good stops the run: no test could start any more.
      signal:
        spawner && options.signal
          ? AbortSignal.any([options.signal, spawner.gone])
          : (options.signal ?? spawner?.gone),
      ...(options.clusterLabel ? { clusterLabel: options.clusterLabel } : {}),
      ...(clusters ? { clusters } : {}),
      ...(options.clusterRetries !== undefined ? { clusterRetries: options.clusterRetries } : {}),
      env,
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      runTests: options.runTests,
      start: options.start ?? spawner!.start,
      onProgress: (p) => {
        progress?.update(p);
        options.onProgress?.(p);
      },
      onRecord: (record) => {
        writeAllSync(results, `${JSON.stringify(record)}\n`);
        junit.add(record);
        options.onRecord?.(record);
      },
    });
  } catch (error) {
    await junit.discard();
    await writeManifest(paths.manifest, {
      ...manifest,
      status: "failed",
      finishedAt: new Date().toISOString(),
      reason: error instanceof Error ? error.message : String(error),
    });
    throw error;
  } finally {
    closeSync(results);
  }
  progress?.finish({ done: outcome.done, total: outcome.total, failed: outcome.failed });
  await junit.finish();

  const artifacts = await Promise.all(
    prepared.components.map((c) =>
      c.artifactDir
        ? collectArtifacts({
            dir: c.artifactDir,
            outDir,
            maxFiles: MAX_ARTIFACT_FILES,
            maxBytes: MAX_ARTIFACT_BYTES,
          })
        : undefined,
    ),
  );
  const finished: RunManifest = {
    ...manifest,
    components: manifest.components.map((c, i) => {
      const collected = artifacts[i];
      return collected ? { ...c, artifacts: collected } : c;
    }),
    status: outcome.status,
    finishedAt: new Date().toISOString(),
    executions: { total: outcome.total, done: outcome.done, records: outcome.records },
    ...(outcome.status === "cancelled" ? { reason: signalReason(options.signal) } : {}),
  };
  await writeManifest(paths.manifest, finished);
  return { outcome, manifest: finished, paths };
}

async function resolveEnvironment(
  plan: ExecutionPlan,
  env: NodeJS.ProcessEnv,
  clusterKubeconfig: string | undefined,
): Promise<{ environment: OteEnvironment; environmentSource: RunManifest["environmentSource"] }> {
  const given = plan.selection?.environment ?? {};
  const kubeconfig = clusterKubeconfig ?? env.KUBECONFIG;
  // Loaded only when needed: the Kubernetes client doubles the runner's memory, and every test
  // process the runner forks pays for the parent's memory.
  const discovered = kubeconfig
    ? await (
        await import("./read-cluster-environment.ts")
      ).readClusterEnvironment({ kubeconfig, arch: plan.arch })
    : {};
  const environment = { ...discovered, ...given };
  const fromFlags = !isEmptyEnvironment(given);
  const environmentSource = kubeconfig
    ? fromFlags
      ? "cluster+flags"
      : "cluster"
    : fromFlags
      ? "flags"
      : "none";
  return { environment, environmentSource };
}

function signalReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (typeof reason === "string") return reason;
  return reason instanceof Error ? reason.message : "cancelled";
}

/** Written atomically: a reader never sees half a manifest. */
async function writeManifest(path: string, manifest: RunManifest): Promise<void> {
  await writeFile(`${path}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
}
