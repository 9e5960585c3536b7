import { decideBatch, type Decision } from "../analysis/decide-batch.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { isMonitor } from "./is-monitor.ts";
import { adaptiveSavedState } from "./adaptive-saved-state.ts";
import { listedTests } from "./listed-tests.ts";
import { shardId } from "./shard-executor.ts";
import { toDecideRecord } from "./to-decide-record.ts";
import type { AdaptiveBatch, AdaptiveState, AdaptiveTest, RunRecord } from "./run-record.ts";

/** The name the first batch's shape is asked for under: the tests are known only once it ran. */
const EVERY_TEST = "(every test)";

/** What an adaptive run does after its last finished batch (or before its first). */
export interface AdaptiveStep {
  /** The decision after the last finished batch and the run's budget; absent before the first. */
  decided?: { budget: number; decision: NonNullable<AdaptiveState["decision"]> };
  /** The batch to run next; absent: the run is over (decided, or its budget is spent). */
  next?: AdaptiveBatch;
}

/**
 * The decision step of an adaptive run on shared clusters (both arms on the same payload), over
 * the records of its finished batches, oldest first (inherited ones included): per test,
 * regression, clean at the target or undecided (`decideBatch`), and the next batch — its
 * undecided tests, iterations and clusters. The budget is what a fixed run of `budgetIterations`
 * per arm would execute: that many times the executions per iteration of the run's first batch
 * (every test, both arms, monitors and retries included), on top of what inherited batches spent.
 * Tests seen in one arm only have nothing to be compared with and are left to the analysis.
 *
 * `batches` are the records of the finished batches in order; those the saved decision has read
 * already (see adaptiveSavedState) are not read again and may be given empty: the decision step's
 * state, the tests listed and the budget's unit are saved with each decision.
 */
export function adaptiveStep(run: RunRecord, batches: readonly (readonly ResultRecord[])[]): AdaptiveStep {
  const settings = run.source.adaptive;
  if (!settings) throw new Error(`run ${run.id} is not adaptive`);
  const planned = run.adaptive?.batches ?? [];
  const first = planned.reduce((end, b) => Math.max(end, b.first + b.count), run.firstIteration);
  const ask = (decision: Decision, tests?: string[]): AdaptiveBatch | undefined => {
    const next = decision.next;
    if (!next) return undefined;
    const iterations = { first, count: next.clusters.pr.length * next.iterations };
    return {
      shardId: shardId(run.arch, iterations),
      ...iterations,
      ...(tests ? { tests } : {}),
      clusters: next.clusters.pr.length,
      iterationsPerCluster: next.iterations,
    };
  };
  const common = {
    target: settings.target,
    payloads: "same" as const,
    // The budget counts executions; the clusters held are reported as cluster-hours.
    costs: { cluster: 0, upgrade: 0 },
  };
  if (batches.length === 0) {
    // Before any batch: the shape the decision step gives a run that has seen nothing, for one test.
    const shape = decideBatch({ ...common, tests: [EVERY_TEST], budget: 2 * settings.budgetIterations });
    const next = ask(shape.decision);
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
  const tests = [...arms].filter(([name, seen]) => seen.size === 2 && !isMonitor(name)).map(([name]) => name);
  // Batches of the run this one continues come first and are spent already: those the saved
  // decision read (a run's own first decision is never saved before its budget), and any since.
  const inheritedSpent =
    (saved?.records ?? 0) +
    unread
      .filter((_, i) => (planned[read + i]?.first ?? run.firstIteration) < run.firstIteration)
      .reduce((sum, b) => sum + b.length, 0);
  const executionsPerIteration =
    planning?.executionsPerIteration ?? batches[0]!.length / Math.max(1, planned[0]?.count ?? 1);
  const budget =
    run.adaptive?.budget ?? inheritedSpent + Math.round(settings.budgetIterations * executionsPerIteration);
  const { decision, state } = decideBatch({
    ...common,
    tests,
    ...(saved ? { state: saved } : {}),
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
  const next = ask(decision, decision.next?.tests);
  return {
    decided: {
      budget,
      decision: {
        tests: decided,
        stopped: decision.stopped,
        spent: decision.spent,
        target: settings.target,
        method: decision.method,
        state,
        planning: {
          executionsPerIteration,
          listed: listedTests(planning?.listed ?? [], unread.flat()),
        },
      },
    },
    ...(next ? { next } : {}),
  };
}
