import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { TestBinaryRegistry } from "../payload/test-binary-registry.ts";
import type { Arm, ResultRecord } from "@netstress/core/model/result-record.ts";
import type { RunProgress } from "../runner/run-plan.ts";
import type { ClusterLease } from "../runs/clusters-under-test.ts";
import { createCapacityLedger, type Lease } from "./capacity-ledger.ts";
import { createClusterHealth, type ClusterHealth } from "./cluster-health.ts";
import { createClusterRuntime, type ClusterRuntime } from "./cluster-runtime.ts";
import { deriveStreamKey } from "./derive-stream-key.ts";
import type { ClusterConfig, FarmConfig } from "./farm-config.ts";
import { iterationFiles } from "./iteration-files.ts";
import { managedSelector } from "./job-identity.ts";
import { createKubeClient, KubeApiError, type KubeClient } from "@netstress/core/kube/kube-client.ts";
import { createLeaseKeeper } from "@netstress/core/kube/lease-keeper.ts";
import { createPlacer } from "./placer.ts";
import { createCapacityReservations } from "./capacity-reservations.ts";
import type { ArtifactLimits } from "./save-iteration-artifacts.ts";
import { chooseClusters } from "./choose-clusters.ts";
import { runIteration, type IterationContext, type IterationOutcome } from "./run-iteration.ts";
import type {
  ExecuteShardInput,
  LostIteration,
  Shard,
  ShardExecutor,
  ShardOutcome,
} from "../runs/shard-executor.ts";

export interface FarmExecutorOptions {
  /** The configuration in force (a watched settings file's `current`, or a constant). */
  config: () => FarmConfig;
  testBinaries: TestBinaryRegistry;
  /** Shared by every bot replica: capacity leases and drain marks live here. */
  redis: Redis;
  prefix: string;
  logger: Logger;
  /**
   * What each Job's record stream key derives from (see deriveStreamKey): the same in every replica
   * and after a restart, or adopted Jobs' streams do not verify. Never logged.
   */
  streamSecret: string;
  /** The PR a run belongs to, for Job labels. */
  runContext?: (runId: string) => Promise<{ pr: number } | undefined>;
  /**
   * Sees every failed API call and watch (a Prometheus counter in the bot). 404 on delete and 409 on
   * create are answers, not failures; neither is a watch's 410 Gone or the end of a watch we stopped.
   */
  onApiError?: (cluster: string, status: number | undefined) => void;
  /** Makes a cluster's client (the bench counts calls through `onCall`). */
  createClient?: (cluster: ClusterConfig) => KubeClient;
  apiTimeoutMs?: number;
  /** A watch without events or bookmarks this long is reopened. */
  watchIdleMs?: number;
  pollMs?: number;
  /** What is kept of the artifact files pods stream (default DEFAULT_ARTIFACT_LIMITS). */
  artifactLimits?: ArtifactLimits;
}

export interface FarmExecutor extends ShardExecutor {
  /** Every configured cluster's runtime (watches start on first use). */
  runtimes(): ClusterRuntime[];
  runtimeFor(cluster: ClusterConfig): ClusterRuntime;
  /**
   * The process is stopping: from now on an aborted shard leaves its Jobs running, for the worker
   * that resumes the run to adopt, instead of deleting them. Call before stopping the workers.
   */
  detach(): void;
  /** Counts a running Job found at start-up; the lease lapses unless its resumed run adopts it. */
  holdCapacity(lease: Lease): Promise<void>;
  /** Frees what a deleted Job held (its holder may be a replica that died). */
  releaseCapacity(lease: Lease): Promise<void>;
  stop(): void;
}

/**
 * The build-farm executor: each iteration of a shard becomes a Kubernetes Job on a cluster of the
 * shard's arch (see runIteration), results come back through pod logs, and everything it needs to
 * carry on after a restart is in the Jobs' labels, Redis and the shard's output directory.
 */
export function createFarmExecutor(options: FarmExecutorOptions): FarmExecutor {
  const { config, logger } = options;
  const initial = config();
  const health = createClusterHealth({
    redis: options.redis,
    prefix: options.prefix,
    failuresToDrain: initial.placement.drainAfterFailures,
    drainMs: initial.placement.drainSeconds * 1000,
    logger,
  });
  const ledger = createCapacityLedger({
    redis: options.redis,
    prefix: options.prefix,
    leaseMs: initial.placement.leaseSeconds * 1000,
  });
  const leases = createLeaseKeeper<Lease>({
    ledger,
    leaseMs: initial.placement.leaseSeconds * 1000,
    logger,
    id: (lease) => `${lease.cluster}/${lease.id}`,
  });
  const runtimes = new Map<string, { runtime: ClusterRuntime; identity: string }>();
  let detached = false;
  const makeClient =
    options.createClient ??
    ((cluster: ClusterConfig) => createKubeClient({ cluster, timeoutMs: options.apiTimeoutMs ?? 15_000 }));

  const runtimeFor = (cluster: ClusterConfig): ClusterRuntime => {
    const identity = `${cluster.kubeconfig}|${cluster.context ?? ""}|${cluster.namespace}`;
    const existing = runtimes.get(cluster.name);
    if (existing) {
      if (existing.identity !== identity) {
        logger.warn(
          { cluster: cluster.name },
          "the cluster's kubeconfig or namespace changed; restart the bot to use it",
        );
      }
      return existing.runtime;
    }
    const runtime = createClusterRuntime({
      client: reportingFailures(makeClient(cluster), { health, logger, onApiError: options.onApiError }),
      labelSelector: managedSelector(options.prefix),
      logger,
      idleMs: options.watchIdleMs ?? 90_000,
    });
    runtimes.set(cluster.name, { runtime, identity });
    return runtime;
  };

  const context: IterationContext = {
    config,
    runtimeFor,
    runtimes: () => config().clusters.map(runtimeFor),
    leases,
    testBinaries: options.testBinaries,
    logger,
    pollMs: options.pollMs ?? 2000,
    instance: options.prefix,
    detached: () => detached,
    place: (wish) => reservations.place(wish),
    streamKey: (scope) => deriveStreamKey(options.streamSecret, scope),
  };
  const reservations = createCapacityReservations({
    config,
    placer: createPlacer({ config, ledger, health, onLease: (lease) => leases.hold(lease) }),
    leases,
    pollMs: context.pollMs,
  });

  return {
    name: "farm",
    async arches() {
      const offered = new Set<Arch>();
      for (const cluster of config().clusters)
        if (cluster.blocked === false) cluster.arches.forEach((a) => offered.add(a));
      return [...offered];
    },
    execute: (input) => executeShard(context, options, input),
    reserveCapacity: (input) => reservations.reserve(input),
    runtimes: context.runtimes,
    runtimeFor,
    holdCapacity: (lease) => ledger.adopt(lease),
    releaseCapacity: (lease) => ledger.release(lease),
    detach() {
      detached = true;
    },
    stop() {
      leases.stop();
      for (const { runtime } of runtimes.values()) runtime.stop();
    },
  };
}

async function executeShard(
  ctx: IterationContext,
  options: FarmExecutorOptions,
  { shard, outDir, signal, onRecord, onProgress, clusters }: ExecuteShardInput,
): Promise<ShardOutcome> {
  const files = iterationFiles(outDir, {
    components: Object.fromEntries(shard.plan.arms.map((a) => [a.arm, a.components.map((c) => c.component)])),
    ...(options.artifactLimits ? { artifactLimits: options.artifactLimits } : {}),
  });
  // One iteration that cannot run stops the others: their fate would be the same (a missing
  // image, no cluster for the arch), and the shard fails either way.
  const stop = new AbortController();
  const forward = () => stop.abort(signal.reason);
  signal.addEventListener("abort", forward, { once: true });
  if (signal.aborted) forward();
  const context = await options.runContext?.(shard.runId).catch(() => undefined);
  const progress = createShardProgress(shard.iterations.count, onProgress);
  const collected = new Map<number, ResultRecord[]>();
  const failures: string[] = [];
  const lost: LostIteration[] = [];
  const iterations = Array.from({ length: shard.iterations.count }, (_, i) => shard.iterations.first + i);
  try {
    await Promise.all(
      iterations.map(async (iteration) => {
        const outcome = await runIterationArms(ctx, {
          shard,
          iteration,
          files,
          signal: stop.signal,
          ...(context ? { pr: context.pr } : {}),
          ...(clusters ? { clusters } : {}),
        });
        if (outcome.kind === "done") {
          collected.set(iteration, outcome.records);
          for (const record of outcome.records) onRecord?.(record);
          progress.add(outcome.records);
        } else if (outcome.kind === "lost") {
          lost.push({ iteration, reason: outcome.reason });
        } else if (outcome.kind === "failed") {
          failures.push(outcome.reason);
          stop.abort(outcome.reason);
        }
      }),
    );
  } finally {
    signal.removeEventListener("abort", forward);
  }
  const records = [...collected.values()].reduce((sum, r) => sum + r.length, 0);
  const resultsPath = await files.writeResults(collected);
  if (failures.length > 0) {
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more iteration(s) failed)` : "";
    return { status: "failed", reason: `${failures[0]}${more}` };
  }
  if (signal.aborted) return { status: "cancelled", resultsPath, records };
  lost.sort((a, b) => a.iteration - b.iteration);
  if (lost.length === iterations.length) {
    return { status: "failed", reason: `every iteration was lost to the infrastructure: ${lost[0]!.reason}` };
  }
  return {
    status: "completed",
    resultsPath,
    records,
    ...(lost.length > 0 ? { lost } : {}),
    ...(clusters && !sharesCluster(clusters) ? { armsIsolated: true } : {}),
  };
}

/** Whether two arms run on one cluster (an adaptive run's shared clusters): each reaches the other's tests. */
function sharesCluster(clusters: NonNullable<ExecuteShardInput["clusters"]>): boolean {
  const owner = new Map<string, Arm>();
  for (const [arm, leases] of Object.entries(clusters) as [Arm, ClusterLease[]][])
    for (const { cluster } of leases) {
      if ((owner.get(cluster.id) ?? arm) !== arm) return true;
      owner.set(cluster.id, arm);
    }
  return false;
}

/**
 * One iteration. Against clusters under test, each arm runs in a pod of its own, both dispatched
 * at once so that they meet the same moment: a pod holds its own arm's cluster credentials only,
 * so the PR's code cannot read the baseline cluster's kubeconfig, touch the baseline's tests or
 * write their results. The iteration is done when every arm's pod is; an arm lost or failed decides
 * it (its twin's results stay saved, and are not run again on a retry).
 */
async function runIterationArms(
  ctx: IterationContext,
  input: Parameters<typeof runIteration>[1],
): Promise<IterationOutcome> {
  const { shard, clusters } = input;
  const run = (part: Parameters<typeof runIteration>[1]) =>
    runIteration(ctx, part).catch((error: unknown): IterationOutcome => ({
      kind: "failed",
      reason: error instanceof Error ? error.message : String(error),
    }));
  if (!clusters || shard.arms.length < 2) return run(input);
  try {
    // An arm with no cluster left that could see the iteration through fails it before its twin
    // takes farm capacity and starts a pod that could only be stopped again.
    chooseClusters(clusters, shard.arms, input.iteration, ctx.config().jobs.activeDeadlineSeconds * 1000);
  } catch (error) {
    return { kind: "failed", reason: error instanceof Error ? error.message : String(error) };
  }
  // An arm that cannot run stops its twin: the iteration is decided.
  const together = new AbortController();
  const forward = () => together.abort(input.signal.reason);
  input.signal.addEventListener("abort", forward, { once: true });
  if (input.signal.aborted) forward();
  const outcomes = await Promise.all(
    shard.arms.map(async (arm) => {
      const outcome = await run({
        ...input,
        shard: armShard(shard, arm),
        files: input.files.forArm(arm),
        clusters: { [arm]: clusters[arm] ?? [] },
        signal: together.signal,
      });
      if (outcome.kind === "failed") together.abort(outcome.reason);
      return outcome;
    }),
  ).finally(() => input.signal.removeEventListener("abort", forward));
  const decisive =
    outcomes.find((o) => o.kind === "failed") ??
    outcomes.find((o) => o.kind === "cancelled") ??
    outcomes.find((o) => o.kind === "lost");
  if (decisive) return decisive;
  return { kind: "done", records: outcomes.flatMap((o) => (o.kind === "done" ? o.records : [])) };
}

/** The shard as one arm's pods run it: that arm and its plan only. */
function armShard(shard: Shard, arm: Arm): Shard {
  return {
    ...shard,
    arms: [arm],
    plan: { ...shard.plan, arms: shard.plan.arms.filter((a) => a.arm === arm) },
  };
}

/** Executions done/total, in the runner's terms, as iterations come back. */
function createShardProgress(iterations: number, onProgress: ((p: RunProgress) => void) | undefined) {
  const progress: RunProgress = { done: 0, total: 0, failed: 0 };
  let collected = 0;
  return {
    add(records: readonly ResultRecord[]) {
      // The last attempt of each test in the iteration decides it, as in the runner.
      const last = new Map<string, ResultRecord>();
      for (const r of records) {
        const key = `${r.arm}\0${r.component}\0${r.name}`;
        if ((last.get(key)?.attempt ?? -1) < r.attempt) last.set(key, r);
      }
      collected += 1;
      progress.done += last.size;
      progress.failed += [...last.values()].filter((r) => r.result === "failed").length;
      progress.total = Math.round((progress.done / collected) * iterations);
      onProgress?.({ ...progress });
    },
  };
}

/**
 * Reports the cluster's failures: each one to `onApiError`, and its own trouble (no answer, 429,
 * 5xx) toward its health, which a success resets.
 */
function reportingFailures(
  client: KubeClient,
  reporting: {
    health: ClusterHealth;
    logger: Logger;
    onApiError: FarmExecutorOptions["onApiError"];
  },
): KubeClient {
  const { health, logger, onApiError } = reporting;
  const watched =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        const result = await call(...args);
        health.succeeded(client.cluster);
        return result;
      } catch (error) {
        if (error instanceof KubeApiError) {
          onApiError?.(client.cluster, error.status);
          if (error.transient)
            health
              .failed(client.cluster, error)
              .catch((err: unknown) => logger.warn({ err }, "drain mark not stored"));
        }
        throw error;
      }
    };
  return {
    cluster: client.cluster,
    namespace: client.namespace,
    createJob: watched(client.createJob),
    deleteJob: watched(client.deleteJob),
    readJob: watched(client.readJob),
    createSecret: watched(client.createSecret),
    replaceSecret: watched(client.replaceSecret),
    deleteSecret: watched(client.deleteSecret),
    readPodLog: watched(client.readPodLog),
    listJobs: watched(client.listJobs),
    listPods: watched(client.listPods),
    watch: (resource, params, handlers) =>
      client.watch(resource, params, {
        onEvent: handlers.onEvent,
        onDone(error) {
          const failure = watchFailure(error);
          if (failure) onApiError?.(client.cluster, failure.status);
          handlers.onDone(error);
        },
      }),
  };
}

/** How a watch ended, when it failed: a status other than 410 Gone, or no answer (not our abort). */
function watchFailure(error: unknown): { status: number | undefined } | undefined {
  if (!(error instanceof Error) || error.name === "AbortError") return undefined;
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status !== "number") return { status: undefined };
  return status === 410 ? undefined : { status };
}
