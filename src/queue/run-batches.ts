import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { readAllResultRecords } from "../runner/read-all-result-records.ts";
import { adaptiveSavedState } from "../runs/adaptive-saved-state.ts";
import { adaptiveStep } from "../runs/adaptive-step.ts";
import { runAdaptiveLoop, type LoopEnd } from "../runs/adaptive-loop.ts";
import { armPayload } from "../runs/arm-payload.ts";
import { batchPlan } from "../runs/batch-plan.ts";
import { batchResults } from "../runs/batch-results.ts";
import { baselineHistory } from "../runs/baseline-history.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ArmLeases, ClusterLease } from "../runs/clusters-under-test.ts";
import { listedTests } from "../runs/listed-tests.ts";
import { readyCrossoverClusters } from "../runs/ready-crossover-clusters.ts";
import type { AdaptiveBatch, AdaptiveState, BatchHalf, RunRecord } from "../runs/run-record.ts";
import type { Shard } from "../runs/shard-executor.ts";
import type { ExecuteContext } from "./execute-context.ts";
import { executeShard } from "./execute-shard.ts";
import { applyAndPublish } from "./run-deps.ts";
import { shardOfRun } from "./shard-of-run.ts";
import { summedProgress } from "./summed-progress.ts";
import type { StepEnd } from "./step-end.ts";

type End = "finished" | StepEnd;
/** A batch's shards, each an arm's (a crossover's halves) or both arms' (shared clusters), with what runs them. */
type Ready = { shard: Shard; clusters: ArmLeases | undefined; half?: BatchHalf }[];

/**
 * An adaptive run's batches (runAdaptiveLoop): after each finished one the decision step says per
 * test where it stands and what runs next. On shared clusters every batch runs on the clusters its
 * first one took; in a crossover by upgrade each batch starts new clusters on the baseline payload
 * for its baseline half and moves the ones that ran it to the PR payload for its PR half (a cluster
 * whose upgrade fails is given back, and the half runs on the others), giving each back once its PR
 * half ran. Each batch — its upgrades and the numbers of its new clusters included — is saved
 * before it runs and each decision after, so a resumed run goes on with the batch it was running:
 * its finished half is not run again, its clusters are asked for by their numbers (the source gives
 * the run its own back), and a cluster that runs the PR payload already is not asked to move
 * again. A decision keeps what the next ones need, so no batch's results are read twice.
 * "finished" once no batch is left.
 */
export async function runBatches(
  context: ExecuteContext,
  design: AdaptiveState["design"],
  /** A crossover's most clusters held at once (its cluster sources' quota). */
  atOnce?: number,
): Promise<End> {
  const { deps, runId } = context;
  let run: RunRecord;
  return runAdaptiveLoop<AdaptiveBatch, Ready, End>({
    async planned() {
      const current = await deps.store.get(runId);
      if (!current || current.state !== "running") return { end: "ended" };
      run = current;
      return run.adaptive?.batches.find((b) => !batchResults(run, b).finished);
    },
    async decide() {
      const history = await readHistory(context, run, design);
      const step = adaptiveStep(
        run,
        design,
        await finishedBatches(run, adaptiveSavedState(run)?.batches ?? 0),
        history?.payloads,
        atOnce,
      );
      if (step.decided) await applyAndPublish(deps, runId, { type: "batch-decided", ...step.decided });
      if (!step.next) {
        if (step.decided) return { end: "finished" };
        return {
          end: {
            failure: `the budget of ${run.source.adaptive!.budgetIterations} iterations cannot pay for a first batch of the decision step: raise budget`,
          },
        };
      }
      const saved = await deps.store.apply(runId, {
        type: "batch-planned",
        design,
        batch: step.next,
        ...(history && history.payloads.length > 0 ? { history } : {}),
      });
      if (!saved) return { end: "ended" };
      run = saved;
      // Clusters that waited for a PR half no batch will run cost cluster-hours for nothing.
      if (step.release) {
        const plan = await planOf(run, step.next);
        await giveBackUnused(
          context,
          run,
          shardOfHalf(context, run, plan, step.next.halves![0]!),
          step.release,
        );
      }
      return step.next;
    },
    ready: async (batch) => {
      const plan = await planOf(run, batch);
      return batch.halves
        ? readyCrossover(context, run, batch, plan)
        : readyShared(context, run, batch, plan);
    },
    async run(_batch, ready) {
      // A crossover's halves run at once, each counting its own executions: the check run shows both.
      const progressOf = summedProgress((p) => context.progress.executions(p));
      const ran = await Promise.all(
        ready.map((r) => executeShard(context, r.shard, r.clusters, progressOf(r.shard.id))),
      );
      const failed = ran.find((r) => r !== "finished");
      if (failed) return { end: failed };
      // A crossover's cluster is done with once its PR half ran: it never goes back.
      const done = ready.flatMap((r) => (r.half?.arm === "pr" ? (r.clusters?.pr ?? []) : []));
      await context.clusters.giveBack(done.map((l) => l.cluster.id));
      return undefined;
    },
  });
}

/**
 * A crossover's history of its baseline payload, read once, before its first batch: the payloads
 * of its own release stream and arch up to that released payload (baselineHistory). Later batches
 * and a resumed run read the one saved with the first batch, even if the store changed since.
 * Undefined when it is not read: shared clusters, a later batch, a run without a release stream,
 * or a bot without a history store; a history that cannot be read leaves the run as without one.
 */
async function readHistory(
  context: ExecuteContext,
  run: RunRecord,
  design: AdaptiveState["design"],
): Promise<AdaptiveState["history"]> {
  const store = context.options.history;
  const stream = run.source.releaseStream;
  if (design !== "crossover by upgrade" || !store || !stream || (run.adaptive?.batches.length ?? 0) > 0)
    return undefined;
  try {
    const payloads = baselineHistory(run, await store.readPayloadHistory({ stream, arch: run.arch }));
    return { stream, arch: run.arch, payloads };
  } catch (error) {
    context.deps.log.warn(
      { err: error, stream },
      "the stream's history could not be read: the baseline arm runs",
    );
    return undefined;
  }
}

/** A batch on shared clusters: both arms on each, the first batch of the run's own holding the most. */
async function readyShared(
  context: ExecuteContext,
  run: RunRecord,
  batch: AdaptiveBatch,
  plan: ExecutionPlan,
): Promise<Ready | LoopEnd<End>> {
  const { clusters } = context;
  const shard = shardOfRun({ run, iterations: batch, plan, ...context.shardSettings });
  if (clusters.served && !clusters.held) {
    // Every later batch runs on the clusters the first one took.
    const own = (run.adaptive?.batches ?? []).filter((b) => b.first >= run.firstIteration);
    const held = await clusters.hold(shard, Math.max(...own.map((b) => b.clusters)), true);
    if (held !== "held") return { end: held };
  }
  const leases = clusters.held?.pr
    ?.toSorted((a, b) => a.cluster.id.localeCompare(b.cluster.id))
    .slice(0, batch.clusters);
  return [{ shard, clusters: leases ? { pr: leases, baseline: leases } : undefined }];
}

/**
 * A crossover batch's halves not finished yet, each on its clusters: the baseline half's started
 * now, the PR half's moved to the PR payload now (each upgrade saved as it ends; one that failed is
 * given back with its reason, and the half runs on the others, or not at all). While the upgrades
 * go on the run says which it waits for (AdaptiveState.upgrading), until the halves run.
 */
async function readyCrossover(
  context: ExecuteContext,
  run: RunRecord,
  batch: AdaptiveBatch,
  plan: ExecutionPlan,
): Promise<Ready | LoopEnd<End>> {
  const { deps, runId, clusters, stop } = context;
  const open = batch.halves!.filter((h) => !run.results.some((r) => r.id === h.shardId));
  const pr = open.find((h) => h.arm === "pr");
  const baseline = open.find((h) => h.arm === "baseline");
  const target = armPayload(run, "pr")!;
  const failedBefore = new Set((run.adaptive?.upgrades ?? []).filter((u) => u.failed).map((u) => u.id));
  const shardOf = (half: BatchHalf) => shardOfHalf(context, run, plan, half);
  let end: StepEnd | undefined;
  const started = new Map<string, string>();
  const upgrade = async (id: string): Promise<ClusterLease> => {
    const lease = clusters.lease(id) ?? (await adopt(id));
    if (!lease.upgrade)
      throw new ClustersUnavailableError(`${id}: its cluster source may not move it to another payload`);
    started.set(id, new Date().toISOString());
    await lease.upgrade(target, stop.signal);
    await applyAndPublish(deps, runId, {
      type: "cluster-upgraded",
      upgrade: { id, startedAt: started.get(id)!, finishedAt: new Date().toISOString() },
    });
    return { ...lease, cluster: { ...lease.cluster, payload: target } };
  };
  const adopt = async (id: string): Promise<ClusterLease> => {
    const got = await adoptCluster(context, run, shardOf(pr!), id);
    if ("end" in got) {
      end = got.end;
      throw new ClustersUnavailableError(`${id} could not be had again`);
    }
    return got.lease;
  };
  const upgrades = (pr?.upgrade ?? []).filter((id) => !failedBefore.has(id));
  try {
    // An upgrade takes 30–90 minutes: the run says it waits for them, and as each ends (published
    // at once, as rare as they are), until the batch's halves run.
    if (upgrades.length > 0) {
      const number = run.adaptive!.batches.findIndex((b) => b.shardId === batch.shardId) + 1;
      await applyAndPublish(deps, runId, { type: "upgrades-started", batch: number, clusters: upgrades });
    }
    const ready = await readyCrossoverClusters<ClusterLease>({
      fresh: baseline?.clusters ?? 0,
      // New clusters of the PR half, started on the PR payload: those the history stands against.
      freshPr: pr ? pr.clusters - (pr.upgrade?.length ?? 0) : 0,
      upgrade: upgrades,
      acquire: async (count, arm) => {
        const half = arm === "pr" ? pr! : baseline!;
        const got = await clusters.start(shardOf(half), count, half.firstSlot ?? 0, arm);
        if (Array.isArray(got)) return got;
        end = got;
        return [];
      },
      upgradeCluster: upgrade,
      failed: async (id, error) => {
        deps.log.warn({ err: error, cluster: id, runId }, "cluster not upgraded: given back");
        const now = new Date().toISOString();
        await applyAndPublish(deps, runId, {
          type: "cluster-upgraded",
          upgrade: {
            id,
            startedAt: started.get(id) ?? now,
            finishedAt: now,
            failed: clusters.detailed ? error.message : (error.reason ?? "it did not complete"),
          },
        });
        await clusters.giveBack([id]);
      },
    });
    if (upgrades.length > 0) await applyAndPublish(deps, runId, { type: "upgrades-ended" });
    if (end) return { end };
    return [
      ...(pr && ready.pr.length > 0 ? [{ shard: shardOf(pr), clusters: { pr: ready.pr }, half: pr }] : []),
      ...(baseline
        ? [{ shard: shardOf(baseline), clusters: { baseline: ready.baseline }, half: baseline }]
        : []),
    ];
  } catch (error) {
    if (stop.signal.aborted) return { end: "stopped" };
    throw error;
  }
}

/**
 * A batch's plan, cut from what the decision that asked for it kept (a decision saved before
 * decisions kept it: from every finished batch).
 */
async function planOf(run: RunRecord, batch: AdaptiveBatch): Promise<ExecutionPlan> {
  const listed =
    run.adaptive?.decision?.planning?.listed ?? listedTests([], (await finishedBatches(run, 0)).flat());
  return batchPlan(run.plan!, batch, listed);
}

/** The shard of one half of a crossover batch: the batch's plan for that arm alone. */
function shardOfHalf(context: ExecuteContext, run: RunRecord, plan: ExecutionPlan, half: BatchHalf): Shard {
  return shardOfRun({
    run,
    iterations: half,
    plan: { ...plan, arms: plan.arms.filter((a) => a.arm === half.arm) },
    ...context.shardSettings,
  });
}

/**
 * A cluster the run held before this process took it over (one that waits for its PR half after a
 * restart): asked for again by its number. Throws when the run no longer holds it or its source
 * gives another cluster; `end` when its source cannot give it.
 */
async function adoptCluster(
  context: ExecuteContext,
  run: RunRecord,
  shard: Shard,
  id: string,
): Promise<{ lease: ClusterLease } | { end: StepEnd }> {
  const slot = run.clusters?.find((c) => c.id === id && !c.releasedAt)?.slot;
  if (slot === undefined) throw new ClustersUnavailableError(`${id} is no longer held by the run`);
  const got = await context.clusters.start(shard, 1, slot);
  if (!Array.isArray(got)) return { end: got };
  const lease = got.find((l) => l.cluster.id === id);
  if (!lease) {
    await context.clusters.giveBack(got.map((l) => l.cluster.id));
    throw new ClustersUnavailableError(`${id} could not be had again (the source gave another cluster)`);
  }
  return { lease };
}

/**
 * Gives back clusters no batch will ask for again. One that a stopped process started (it waited
 * for its PR half) is not this process's to give back until it is had again by its number: given
 * back only by this process's leases, it would stay held, costing cluster-hours and quota, until
 * the bot next starts. One that cannot be had again is left to start-up reconciliation.
 */
async function giveBackUnused(
  context: ExecuteContext,
  run: RunRecord,
  shard: Shard,
  ids: readonly string[],
): Promise<void> {
  for (const id of ids.filter((id) => !context.clusters.lease(id))) {
    const adopted = await adoptCluster(context, run, shard, id).catch((error: unknown) => ({ error }));
    if (!("lease" in adopted))
      context.deps.log.warn(
        { ...("error" in adopted ? { err: adopted.error } : {}), cluster: id, runId: run.id },
        "a cluster the run no longer needs could not be had again to give it back",
      );
  }
  await context.clusters.giveBack(ids);
}

/** The records of the run's finished batches, oldest first; the first `read` are given empty, unread. */
async function finishedBatches(run: RunRecord, read: number): Promise<ResultRecord[][]> {
  const finished = (run.adaptive?.batches ?? []).filter((b) => batchResults(run, b).finished);
  return Promise.all(
    finished.map(async (batch, i) =>
      i < read
        ? []
        : (
            await Promise.all(
              batchResults(run, batch).results.map((set) => readAllResultRecords(set.resultsPath)),
            )
          ).flat(),
    ),
  );
}
