import { decideBatch, type NextBatch } from "../analysis/decide-batch.ts";
import type { DecideHistoryPayload } from "../analysis/decide-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { isMonitor } from "./is-monitor.ts";
import { adaptiveSavedState } from "./adaptive-saved-state.ts";
import { CROSSOVER_COSTS, firstBatchShape } from "./first-batch-shape.ts";
import { listedTests } from "./listed-tests.ts";
import { shardId } from "./shard-executor.ts";
import { toDecideRecord } from "./to-decide-record.ts";
import type { AdaptiveBatch, AdaptiveState, AdaptiveTest, BatchHalf, RunRecord } from "./run-record.ts";

/** What an adaptive run does after its last finished batch (or before its first). */
export interface AdaptiveStep {
  /** The decision after the last finished batch and the run's budget; absent before the first. */
  decided?: { budget: number; decision: NonNullable<AdaptiveState["decision"]> };
  /** The batch to run next; absent: the run is over (decided, or its budget is spent). */
  next?: AdaptiveBatch;
  /** Held clusters no batch will ask for again (a crossover's, waiting for a PR half): give them back. */
  release?: string[];
}

/**
 * The decision step of an adaptive run over the records of its finished batches, oldest first
 * (inherited ones included): per test, regression, clean at the target or undecided
 * (`decideBatch`), and the next batch — its undecided tests, iterations and clusters. On shared
 * clusters (both arms on one payload) a batch is one shard on the clusters held; in a crossover by
 * upgrade (the arms' payloads differ) it has halves: the PR arm on clusters that ran the baseline
 * arm before, upgraded first — only those the run still holds (`run.clusters`): one given back
 * before its upgrade is never asked for again — and the baseline arm on new clusters, numbered
 * after every cluster the run started. The budget is what a fixed run of `budgetIterations` per
 * arm would execute: that many times the executions per iteration of the run's first batch (every
 * test, both arms, monitors and retries included), on top of what inherited batches spent; a
 * crossover's new clusters and upgrades are priced in it (CROSSOVER_COSTS). Tests seen in one arm
 * only have nothing to be compared with and are left to the analysis (a crossover's tests are the
 * baseline arm's until its PR arm first ran).
 *
 * With the stream's `history` of the baseline payload (a crossover's; the one saved with the run,
 * or, before its first batch, the one read for it, `historyRead`) a history payload stands in for the baseline
 * arm: its PR half starts new clusters on the PR payload, numbered as the baseline half's are, and
 * a test the history knows is compared as soon as the PR arm ran it.
 *
 * `batches` are the records of the finished batches in order; those the saved decision has read
 * already (see adaptiveSavedState) are not read again and may be given empty: the decision step's
 * state, the tests listed and the budget's unit are saved with each decision.
 */
export function adaptiveStep(
  run: RunRecord,
  design: AdaptiveState["design"],
  batches: readonly (readonly ResultRecord[])[],
  historyRead?: readonly DecideHistoryPayload[],
  /** A crossover's most clusters held at once (its cluster sources' quota; DecideInput.atOnce). */
  atOnce?: number,
): AdaptiveStep {
  const history = historyRead ?? run.adaptive?.history?.payloads ?? [];
  const settings = run.source.adaptive;
  if (!settings) throw new Error(`run ${run.id} is not adaptive`);
  const crossover = design === "crossover by upgrade";
  const planned = run.adaptive?.batches ?? [];
  const first = planned.reduce((end, b) => Math.max(end, b.first + b.count), run.firstIteration);
  const startedClusters = planned
    .filter((b) => b.first >= run.firstIteration)
    .flatMap((b) => b.halves ?? [])
    .reduce((sum, half) => sum + half.clusters - (half.upgrade?.length ?? 0), 0);
  const ask = (next: NextBatch | null, tests?: string[]): AdaptiveBatch | undefined => {
    if (!next) return undefined;
    const { iterations } = next;
    if (!crossover) {
      const range = { first, count: next.clusters.pr.length * iterations };
      return {
        shardId: shardId(run.arch, range),
        ...range,
        ...(tests ? { tests } : {}),
        clusters: next.clusters.pr.length,
        iterationsPerCluster: iterations,
      };
    }
    // One arm per cluster and batch, each half with iterations of its own.
    const halves: BatchHalf[] = [];
    let at = first;
    const half = (arm: BatchHalf["arm"], clusters: number, extra: Partial<BatchHalf>) => {
      if (clusters === 0) return;
      const range = { first: at, count: clusters * iterations };
      halves.push({ arm, shardId: shardId(run.arch, range), ...range, clusters, ...extra });
      at += range.count;
    };
    // The PR half's clusters are upgraded ones, or new ones on the PR payload against the history.
    const freshPr = next.clusters.pr.filter((id) => !next.upgrade.includes(id)).length;
    // A half with no upgrade names none: an upgrade list counts as done once each has failed (batchResults).
    half("pr", next.clusters.pr.length, {
      ...(next.upgrade.length > 0 ? { upgrade: next.upgrade } : {}),
      ...(freshPr > 0 ? { firstSlot: startedClusters } : {}),
    });
    half("baseline", next.clusters.baseline.length, { firstSlot: startedClusters + freshPr });
    const range = { first, count: at - first };
    return {
      shardId: shardId(run.arch, range),
      ...range,
      ...(tests ? { tests } : {}),
      clusters: next.clusters.pr.length + next.clusters.baseline.length,
      iterationsPerCluster: iterations,
      halves,
    };
  };
  if (batches.length === 0) {
    // Before any batch: the shape the decision step gives a run that has seen nothing, for one test.
    const next = ask(firstBatchShape(design, settings.target, settings.budgetIterations, history, atOnce));
    return next ? { next } : {};
  }

  // The decision step goes on from the state saved with the last decision: it reads only the
  // batches since (all of them for a run saved before decisions carried it).
  const savedDecision = run.adaptive?.decision;
  const saved = adaptiveSavedState(run);
  const planning = saved ? savedDecision?.planning : undefined;
  const read = saved?.batches ?? 0;
  const unread = batches.slice(read);
  const arms = new Map<string, Set<string>>();
  for (const test of saved?.tests ?? []) {
    const seen = new Set<string>();
    if (test.executions.pr > 0) seen.add("pr");
    if (test.executions.baseline > 0) seen.add("baseline");
    arms.set(test.name, seen);
  }
  const informing = new Set((savedDecision?.tests ?? []).filter((t) => t.informing).map((t) => t.name));
  for (const records of unread)
    for (const record of records) {
      const seen = arms.get(record.name) ?? new Set<string>();
      arms.set(record.name, seen.add(record.arm));
      if (record.lifecycle !== "blocking") informing.add(record.name);
    }
  // A crossover's PR arm runs only once a cluster is upgraded: until then the baseline arm's tests wait for it.
  const prRan = [...arms.values()].some((seen) => seen.has("pr"));
  const known = new Set(history.flatMap((payload) => Object.keys(payload.tests)));
  const tests = [...arms]
    .filter(
      ([name, seen]) =>
        (seen.size === 2 || (crossover && !prRan) || (seen.has("pr") && known.has(name))) && !isMonitor(name),
    )
    .map(([name]) => name);
  // Batches of the run this one continues come first and are spent already: those the saved
  // decision read (a run's own first decision is never saved before its budget), and any since.
  const inheritedSpent =
    (saved?.records ?? 0) +
    unread
      .filter((_, i) => (planned[read + i]?.first ?? run.firstIteration) < run.firstIteration)
      .reduce((sum, b) => sum + b.length, 0);
  const executionsPerIteration =
    planning?.executionsPerIteration ??
    // A crossover's first batch is its baseline half alone: one arm's executions per iteration.
    ((crossover ? 2 : 1) * batches[0]!.length) / Math.max(1, planned[0]?.count ?? 1);
  const budget =
    run.adaptive?.budget ?? inheritedSpent + Math.round(settings.budgetIterations * executionsPerIteration);
  const unit = executionsPerIteration / 2;
  const { decision, state } = decideBatch({
    target: settings.target,
    payloads: crossover ? "differ" : "same",
    // Shared clusters: the budget counts executions, the clusters held are reported as cluster-hours.
    costs: crossover
      ? {
          cluster: Math.round(CROSSOVER_COSTS.cluster * unit),
          upgrade: Math.round(CROSSOVER_COSTS.upgrade * unit),
        }
      : { cluster: 0, upgrade: 0 },
    ...(crossover ? { held: (run.clusters ?? []).filter((c) => !c.releasedAt).map((c) => c.id) } : {}),
    tests,
    ...(saved ? { state: saved } : {}),
    ...(crossover && history.length > 0 ? { history } : {}),
    ...(crossover && atOnce !== undefined ? { atOnce } : {}),
    batches: unread.map((records) => records.map(toDecideRecord)),
    budget,
  });
  const before = new Map((savedDecision?.tests ?? []).map((t) => [t.name, t]));
  const decided: AdaptiveTest[] = decision.tests.map((t) => {
    const earlier = before.get(t.name)?.decidedAfter;
    return {
      name: t.name,
      decision: t.decision,
      reason: t.reason,
      ...(t.decision === "undecided" ? {} : { decidedAfter: earlier ?? read + unread.length }),
      executions: t.executions,
      clusters: t.clusters,
      contrasts: t.contrasts,
      meanContrast: t.meanContrast,
      ...(informing.has(t.name) ? { informing: true } : {}),
    };
  });
  const next = ask(decision.next, decision.next?.tests);
  return {
    decided: {
      budget,
      decision: {
        tests: decided,
        stopped: decision.stopped,
        spent: decision.spent,
        target: settings.target,
        method: decision.method,
        ...(decision.notes.length > 0 ? { notes: decision.notes } : {}),
        state,
        planning: {
          executionsPerIteration,
          listed: listedTests(planning?.listed ?? [], unread.flat()),
        },
      },
    },
    ...(next ? { next } : {}),
    ...(decision.next?.release.length ? { release: decision.next.release } : {}),
  };
}
