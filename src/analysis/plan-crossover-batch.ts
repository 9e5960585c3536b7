import { CROSSOVER, type NextBatch, type TestDecision } from "./decide-batch-shapes.ts";
import type { DecideState } from "./decide-state.ts";

/**
 * A crossover's next batch, or null when the budget left pays for none: the clusters that ran the
 * baseline payload and wait for the PR payload are upgraded first; suspects get pairs of new
 * clusters, one on each payload, that are never upgraded; new clusters on the baseline payload
 * start only once no cluster waits for its PR half, and only when their PR half is paid for too.
 * Once every undecided test is a suspect, the batch is its pairs alone, at
 * CROSSOVER.confirmIterations, and the waiting clusters are given back.
 */
export function planCrossoverBatch(input: {
  state: DecideState;
  decisions: readonly TestDecision[];
  /** The clusters still there to be upgraded; absent: all. */
  held?: readonly string[];
  /** The most clusters held at once, those waiting for their PR half included. */
  atOnce: number;
  costs: { cluster: number; upgrade: number };
  /** What the budget has left, in test executions. */
  left: number;
  /** A new cluster's id. */
  newId: () => string;
}): NextBatch | null {
  const { state, decisions, costs, left, newId } = input;
  const undecided = decisions.filter((test) => test.decision === "undecided").map((test) => test.name);
  // Once every undecided test is a suspect, contrasts through an upgrade can no longer decide
  // anything: the batch is its confirmation pairs alone.
  const suspects = decisions.some((test) => test.decision === "undecided" && test.confirmation);
  const onlySuspects = decisions.every((test) => test.decision !== "undecided" || test.confirmation);
  // A pair runs the suspects alone, so more iterations cost little beside its two installs, and
  // they make the sign of its contrast surer.
  const iterations = onlySuspects ? CROSSOVER.confirmIterations : CROSSOVER.iterations;
  const run = iterations * undecided.length;
  // Clusters that ran the baseline payload and wait for the PR payload: finishing them comes first.
  const holding = input.held && new Set(input.held);
  const waiting = state.clusters
    .filter((cluster) => cluster.firstPr === undefined && (holding?.has(cluster.name) ?? true))
    .map((c) => c.name);
  const finishing = onlySuspects
    ? []
    : waiting.slice(0, Math.max(0, Math.floor(left / (costs.upgrade + run))));
  const afterFinishing = left - finishing.length * (costs.upgrade + run);
  // New clusters fit beside every cluster still held (those given back first do not count).
  const room = Math.max(0, input.atOnce - (onlySuspects ? 0 : waiting.length));
  // A suspect is confirmed on pairs of new clusters, one on each payload, neither upgraded. No
  // more clusters are held at once than without suspects (a cluster source's quota counts them
  // all): while clusters wait for their PR half, a batch starts at most CROSSOVER.clusters new
  // ones, pairs included; once they are given back (`release`), CROSSOVER.clusters pairs.
  const pairs = suspects
    ? Math.min(
        onlySuspects ? CROSSOVER.clusters : CROSSOVER.clusters / 2,
        Math.floor(room / 2),
        Math.floor(afterFinishing / (2 * (costs.cluster + run))),
      )
    : 0;
  const afterPairs = afterFinishing - pairs * 2 * (costs.cluster + run);
  // Any other new cluster is started only once no cluster waits for its PR half: the PR halves
  // being run decide most of the tests the new clusters' baseline halves would run (a null run of
  // 500 tests has 27 left after its first 4 PR halves), and only when its PR half is paid for too.
  const starting =
    onlySuspects || waiting.length > 0
      ? 0
      : Math.max(
          0,
          Math.min(
            CROSSOVER.clusters - 2 * pairs,
            room - 2 * pairs,
            Math.floor(afterPairs / (costs.cluster + run + costs.upgrade + run)),
          ),
        );
  const confirming = Array.from({ length: pairs }, newId);
  const fresh = Array.from({ length: pairs + starting }, newId);
  if (finishing.length + fresh.length === 0) return null;
  return {
    tests: undecided,
    iterations,
    clusters: { pr: [...finishing, ...confirming], baseline: fresh },
    upgrade: finishing,
    cost:
      finishing.length * (costs.upgrade + run) + (confirming.length + fresh.length) * (costs.cluster + run),
    release: onlySuspects ? waiting : [],
  };
}
