import { join } from "node:path";
import type { ExecutionPlan } from "../runner/execution-plan.ts";
import type { RunProgress } from "../runner/run-plan.ts";
import type { Arm } from "../runner/result-record.ts";
import type { AdaptiveBatch, ResultSet, RunRecord } from "../runs/run-record.ts";
import type { ResultRecord } from "../runner/result-record.ts";
import { readResultRecords } from "../runner/read-result-records.ts";
import { adaptiveConclusion } from "../runs/adaptive-conclusion.ts";
import { adaptiveStep } from "../runs/adaptive-step.ts";
import { adaptiveSummary } from "../runs/adaptive-summary.ts";
import { batchPlan } from "../runs/batch-plan.ts";
import { adaptiveDesign } from "./adaptive-design.ts";
import type { AnalyzeRunResults } from "../runs/analyze-port.ts";
import { DEFAULT_CLUSTERS_PER_ARM } from "../config/cluster-count.ts";
import { payloadDigest } from "../clusters/same-payload.ts";
import { armPayload } from "../runs/arm-payload.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ArmLeases, ClusterProvider, ProvisionProgress } from "../runs/clusters-under-test.ts";
import { acquireClusters, type HeldLeases } from "./acquire-clusters.ts";
import { lostIterationNotes } from "../runs/lost-iteration-notes.ts";
import { runWording } from "../runs/run-wording.ts";
import { shardId, type CapacityReservation, type Shard, type ShardExecutor } from "../runs/shard-executor.ts";
import { createCoalescer } from "./coalesce.ts";
import { withUpgradeTargets } from "../runner/with-upgrade-targets.ts";
import { runArtifactHref } from "./run-artifacts.ts";
import { applyAndPublish, runScoped, type RunDeps } from "./run-deps.ts";

/**
 * The run's plan with the tests it selects (its suite, whether [Disruptive] tests may run) and, for
 * an upgrade run, each arm's upgrade target: the payload its clusters would otherwise run.
 */
function withSelection(plan: ExecutionPlan, run: RunRecord): ExecutionPlan {
  const { options } = run;
  const upgrade = options.upgradeFrom !== undefined;
  if (!options.suite && !options.includeDisruptive && !upgrade) return plan;
  const selected: ExecutionPlan = {
    ...plan,
    selection: {
      ...plan.selection,
      ...(options.suite ? { suite: options.suite } : {}),
      ...(options.includeDisruptive ? { includeDisruptive: true } : {}),
    },
  };
  return upgrade ? withUpgradeTargets(selected, (arm) => armPayload(run, arm)) : selected;
}

/** Where a run's files live: its shard's results under shards/, its report under report/. */
export function runDir(dataDir: string, runId: string): string {
  return join(dataDir, "runs", runId);
}

export interface ExecuteStageOptions {
  executor: ShardExecutor;
  /**
   * The source of the clusters under test each arm runs on (its payload on the run's arch), asked
   * per run: undefined (or absent) while none is configured, and every iteration runs against the
   * executor's own cluster under test, or none.
   */
  clusters?: () => ClusterProvider | undefined;
  analyze: AnalyzeRunResults;
  /** Runs live under <dataDir>/runs/<run id>/. */
  dataDir: string;
  /** The bot's address: the report links the run's artifacts there (absent: from the host's root). */
  publicUrl?: string;
  /** At most one progress update of a check run per interval. */
  progressIntervalMs?: number;
  testTimeoutMs?: number;
  retries?: number;
  /**
   * Aborted when this process stops: executions stop, but the run is not concluded, so that the
   * job, found stalled, resumes on the next worker.
   */
  shutdown?: AbortSignal;
}

const TIMED_OUT = "timed out";
const SHUTDOWN = "the bot is stopping";

/**
 * The execute stage of a run, whatever its subject ("interrupted": this process is stopping and
 * the run must resume elsewhere): runs its iterations through the shard executor with live
 * (bounded rate) progress, honours abort and the run's deadline (counted from its first start),
 * analyzes all its results (with those of the run it extends) and concludes. A shard that finished
 * before a worker restart is not run again. An adaptive run (mode: adaptive) runs as batches on
 * shared clusters until its decision step stops it (see runBatches), and concludes from it.
 */
export async function processExecute(
  stageDeps: RunDeps,
  options: ExecuteStageOptions,
  runId: string,
): Promise<"done" | "interrupted"> {
  const { executor, progressIntervalMs = 15_000, testTimeoutMs = 15 * 60_000, retries = 1 } = options;
  if (options.shutdown?.aborted) return "interrupted";
  const initial = await stageDeps.store.get(runId);
  if (!initial || initial.state === "completed") return "done";
  const deps = runScoped(stageDeps, initial);
  if (!initial.plan) {
    await applyAndPublish(deps, runId, {
      type: "concluded",
      conclusion: "failure",
      reason: "the run has no plan",
    });
    return "done";
  }
  const started = await applyAndPublish(deps, runId, { type: "started" });
  if (!started) return "done";

  const controller = new AbortController();
  const unregister = deps.abortBus.register(runId, controller);
  const onShutdown = () => controller.abort(SHUTDOWN);
  options.shutdown?.addEventListener("abort", onShutdown, { once: true });
  if (options.shutdown?.aborted) onShutdown();
  const deadline = Date.parse(started.startedAt!) + started.source.timeoutMinutes * 60_000;
  const timer = setTimeout(() => controller.abort(TIMED_OUT), Math.max(0, deadline - Date.now()));
  let progress: RunProgress | undefined;
  /** Provisioning reports not stored yet, oldest first. */
  const provisioning: ProvisionProgress[] = [];
  const progressUpdates = createCoalescer({
    intervalMs: progressIntervalMs,
    task: async () => {
      let updated: RunRecord | undefined;
      // The newest report of each arm is what the check run shows.
      const latest = new Map(provisioning.splice(0).map((p) => [p.arm, p]));
      for (const p of latest.values())
        updated = (await deps.store.apply(runId, { type: "provisioning", progress: p })) ?? updated;
      if (progress) updated = (await deps.store.apply(runId, { type: "progress", progress })) ?? updated;
      if (updated) await deps.publish(updated);
    },
    onError: (error) => deps.log.warn({ err: error }, "progress update failed"),
  });
  let held: HeldLeases | undefined;
  /** Build-farm capacity taken before the clusters; what the shard's Jobs did not use goes back at the end. */
  let capacity: CapacityReservation | undefined;
  /**
   * Gives the run's clusters back (once) and records when, for its cluster-hours. Not when this
   * process is stopping: the worker that resumes the run adopts them (a cluster's names and lease
   * are its run's), instead of installing new ones; if the run ends meanwhile, start-up
   * reconciliation gives them back, and unrenewed leases lapse.
   */
  const releaseClusters = async () => {
    if (!held) return;
    const leases = held;
    held = undefined;
    if (controller.signal.reason === SHUTDOWN) return;
    const ids = await leases.releaseAll();
    if (ids.length > 0) await deps.store.apply(runId, { type: "clusters-released", ids });
  };
  const conclude = async (conclusion: "failure" | "timed_out" | "cancelled", reason: string) => {
    await releaseClusters();
    return applyAndPublish(deps, runId, { type: "concluded", conclusion, reason });
  };
  const stopped = async (): Promise<"done" | "interrupted"> => {
    if (controller.signal.reason === SHUTDOWN) return "interrupted";
    if (controller.signal.reason === TIMED_OUT) {
      await conclude("timed_out", `the run took longer than ${started.source.timeoutMinutes} minutes`);
    } else {
      await conclude("cancelled", String(controller.signal.reason ?? "cancelled"));
    }
    return "done";
  };

  const provider = options.clusters?.();
  /**
   * Whether what the run is told may carry infrastructure detail (hub namespaces, Secret and object
   * names): not on a public repository's check run, which anyone reads.
   */
  const detailed = started.subject.kind !== "pr" || started.subject.privateRepository === true;
  /**
   * Runs one shard on its clusters (when a cluster source serves the run) and saves its results:
   * "finished", or "done" when the run concluded or stopped (see `stopped`) meanwhile.
   */
  const runShard = async (
    shard: Shard,
    onClusters: ArmLeases | undefined,
  ): Promise<"finished" | "done" | "interrupted"> => {
    const outcome = await executor.execute({
      shard,
      outDir: join(runDir(options.dataDir, runId), "shards", shard.id),
      signal: controller.signal,
      ...(onClusters ? { clusters: onClusters } : {}),
      onProgress: (p) => {
        progress = p;
        progressUpdates.request();
      },
    });
    await progressUpdates.flush();
    if (outcome.status === "failed") {
      await conclude(
        "failure",
        runWording.executorFailed(started, {
          executor: executor.name,
          shardId: shard.id,
          reason: outcome.reason,
        }),
      );
      return "done";
    }
    if (outcome.status === "cancelled") return await stopped();
    const finished = {
      id: shard.id,
      resultsPath: outcome.resultsPath,
      ...shard.iterations,
      ...(outcome.lost ? { lost: outcome.lost } : {}),
      ...(outcome.armsIsolated ? { armsIsolated: true } : {}),
    };
    if (!(await deps.store.apply(runId, { type: "results-finished", results: finished }))) return "done";
    return "finished";
  };
  /**
   * Takes the build-farm capacity of the shard's first iterations, then `count` clusters per arm
   * (shared: one set both arms run on) and records them; "done" when the run ended meanwhile.
   */
  const holdClusters = async (
    shard: Shard,
    count: number,
    shared: boolean,
  ): Promise<"held" | "done" | "interrupted"> => {
    if (!provider) return "held";
    // An upgrade run's clusters all start at its upgradeFrom; the tests upgrade each arm's.
    const arms = (shared ? (["pr"] as const) : shard.arms).map((arm) =>
      started.options.upgradeFrom
        ? {
            arm,
            payload: started.payloads?.upgradeFrom ?? started.options.upgradeFrom,
            upgradeTarget: armPayload(started, arm),
          }
        : { arm, payload: armPayload(started, arm) },
    );
    // Clusters are compared by digest: a tag the resolve stage did not pin would match none.
    const unpinned = arms.find((a) => a.payload !== undefined && payloadDigest(a.payload) === undefined);
    if (unpinned) {
      await conclude(
        "failure",
        `the ${unpinned.arm} arm's payload ${unpinned.payload} was not resolved to a digest, and clusters under test are matched by digest: run it again`,
      );
      return "done";
    }
    try {
      // Clusters cost cloud hours from the moment they exist: ask for them only once the
      // build farm has taken the capacity of the iterations that will run on them.
      for (const { arm } of arms) {
        provisioning.push({
          arm,
          arch: started.arch,
          wanted: count,
          ready: 0,
          phase: "queued",
          since: new Date().toISOString(),
          detail: "waiting for build-farm capacity",
        });
      }
      progressUpdates.request();
      capacity = await executor.reserveCapacity?.({
        shard,
        jobs: Math.min(shard.iterations.count, count),
        signal: controller.signal,
      });
      held = await acquireClusters({
        provider,
        runId,
        arch: started.arch,
        arms,
        count,
        kind: started.subject.kind,
        signal: controller.signal,
        onProgress: ({ detail, ...p }) => {
          // A cluster on its way names hub objects (pools, deployments): a public check run says
          // only how far it is; waiting for a quota says nothing of the hub and stays.
          const told = detailed || p.phase === "queued" ? { ...p, ...(detail ? { detail } : {}) } : p;
          provisioning.push(told);
          progressUpdates.request();
        },
        onReleaseError: (error, lease) =>
          deps.log.warn({ err: error, cluster: lease.cluster.id }, "cluster not given back"),
      });
    } catch (error) {
      await progressUpdates.flush();
      if (controller.signal.aborted) return await stopped();
      if (!(error instanceof ClustersUnavailableError)) throw error;
      // The short reason on a public check run, the detail in the logs (see `detailed`).
      deps.log.warn({ err: error, runId }, "no clusters under test for the run");
      await conclude(
        "failure",
        runWording.clustersUnavailable(
          started,
          detailed
            ? error.message
            : (error.reason ?? "the cluster sources could not provide them (the bot's logs say why)"),
        ),
      );
      return "done";
    }
    await progressUpdates.flush();
    await deps.store.apply(runId, {
      type: "clusters-acquired",
      clusters: Object.entries(held.byArm).flatMap(([arm, leases]) =>
        leases.map((l) => ({
          arm: arm as Arm,
          ...(shared ? { shared: true } : {}),
          id: l.cluster.id,
          source: l.cluster.source,
          payload: l.cluster.payload,
          acquiredAt: new Date().toISOString(),
        })),
      ),
    });
    return "held";
  };
  const shardOf = (iterations: { first: number; count: number }, plan: ExecutionPlan): Shard => ({
    runId,
    id: shardId(started.arch, iterations),
    arch: started.arch,
    arms: plan.arms.map((a) => a.arm),
    iterations,
    plan: withSelection(plan, started),
    seed: runId.slice(0, 16),
    ...(started.source.capabilities?.length ? { capabilities: started.source.capabilities } : {}),
    ...(started.options.focus ? { focus: started.options.focus } : {}),
    parallel: started.source.parallel,
    ...(started.source.networkParallel ? { networkParallel: started.source.networkParallel } : {}),
    testTimeoutMs,
    retries,
  });

  /**
   * An adaptive run's batches: after each finished one the decision step says per test where it
   * stands and what runs next. Each batch is saved before it runs and each decision after, so a
   * resumed run goes on with the batch it was running, on the clusters it held. "finished" once
   * no batch is left.
   */
  const runBatches = async (): Promise<"finished" | "done" | "interrupted"> => {
    const read = new Map<string, Promise<ResultRecord[]>>();
    const recordsOf = (set: ResultSet) => {
      let records = read.get(set.id);
      if (!records) read.set(set.id, (records = readAll(set.resultsPath)));
      return records;
    };
    for (;;) {
      const run = await deps.store.get(runId);
      if (!run || run.state !== "running") return "done";
      const resultsOf = (batch: AdaptiveBatch) => run.results.find((r) => r.id === batch.shardId);
      const planned = run.adaptive?.batches ?? [];
      const earlier = await Promise.all(planned.flatMap((b) => resultsOf(b) ?? []).map(recordsOf));
      let batch = planned.find((b) => !resultsOf(b));
      if (!batch) {
        const step = adaptiveStep(run, earlier);
        if (step.decided) await applyAndPublish(deps, runId, { type: "batch-decided", ...step.decided });
        if (!step.next) {
          if (step.decided) return "finished";
          await conclude(
            "failure",
            `the budget of ${run.source.adaptive!.budgetIterations} iterations cannot pay for a first batch of the decision step: raise budget`,
          );
          return "done";
        }
        batch = step.next;
        const saved = await deps.store.apply(runId, {
          type: "batch-planned",
          design: "shared clusters",
          batch,
        });
        if (!saved) return "done";
      }
      const shard = shardOf(batch, batchPlan(run.plan!, batch, earlier.flat()));
      if (provider && !held) {
        // The first batch of the run's own holds the most clusters: every later one runs on them.
        const own = [...planned, batch].filter((b) => b.first >= run.firstIteration);
        const clusters = await holdClusters(shard, Math.max(...own.map((b) => b.clusters)), true);
        if (clusters !== "held") return clusters;
      }
      const leases = held?.byArm.pr
        ?.toSorted((a, b) => a.cluster.id.localeCompare(b.cluster.id))
        .slice(0, batch.clusters);
      const ran = await runShard(shard, leases ? { pr: leases, baseline: leases } : undefined);
      if (ran !== "finished") return ran;
    }
  };

  const notes: string[] = [];
  try {
    const design = started.source.adaptive ? adaptiveDesign(started, provider !== undefined) : undefined;
    if (design && "fixed" in design) notes.push(design.fixed);
    if (design && "design" in design) {
      const ran = await runBatches();
      if (ran !== "finished") return ran;
    } else {
      const iterations = { first: started.firstIteration, count: started.options.iterations };
      const shard = shardOf(iterations, started.plan!);
      if (!started.results.some((s) => s.id === shard.id)) {
        const clusters = await holdClusters(
          shard,
          started.source.clusters ?? DEFAULT_CLUSTERS_PER_ARM,
          false,
        );
        if (clusters !== "held") return clusters;
        const ran = await runShard(shard, held?.byArm);
        if (ran !== "finished") return ran;
      }
    }
    await releaseClusters();
    const analyzing = await applyAndPublish(deps, runId, { type: "analyzing" });
    if (!analyzing) return "done";
    const upgradeNote = [runWording.upgradeRun(analyzing)].filter((n) => n !== undefined);
    const adaptive = adaptiveSummary(analyzing, new Date());
    const analysis = await options.analyze({
      run: analyzing,
      resultsPaths: analyzing.results.map((s) => s.resultsPath),
      outDir: join(runDir(options.dataDir, runId), "report"),
      notes: [
        ...upgradeNote,
        ...notes,
        ...lostIterationNotes(analyzing.results.flatMap((s) => s.lost ?? [])),
      ],
      ...(adaptive ? { adaptive } : {}),
      artifactHref: runArtifactHref({
        runDir: runDir(options.dataDir, runId),
        runId,
        ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
      }),
    });
    await applyAndPublish(deps, runId, {
      type: "analyzed",
      ...adaptiveConclusion(analyzing, analysis),
    });
  } catch (error) {
    deps.log.error({ err: error }, "run failed");
    await conclude("failure", `the run failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    // Whatever happened (a thrown error included), no cluster stays held.
    await releaseClusters().catch((error: unknown) =>
      deps.log.error({ err: error }, "clusters not released"),
    );
    await capacity
      ?.release()
      .catch((error: unknown) => deps.log.warn({ err: error }, "build-farm capacity not given back"));
    clearTimeout(timer);
    unregister();
    options.shutdown?.removeEventListener("abort", onShutdown);
    await progressUpdates.flush();
  }
  return "done";
}

async function readAll(path: string): Promise<ResultRecord[]> {
  const records: ResultRecord[] = [];
  for await (const record of readResultRecords(path)) records.push(record);
  return records;
}
