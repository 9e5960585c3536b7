import { CROSSOVER, SHARED, type NextBatch, type TestDecision } from "./decide-batch-shapes.ts";
import { confirmationEValues } from "./confirmation-e-values.ts";
import { DecideInputError } from "./decide-input-error.ts";
import type { DecideHistoryPayload, DecideRecord } from "./decide-records.ts";
import type { DecideState } from "./decide-state.ts";
import { markSuspects } from "./mark-suspects.ts";
import { pairedEValues } from "./paired-e-values.ts";
import { planCrossoverBatch } from "./plan-crossover-batch.ts";
import { readDecideBatch } from "./read-decide-batch.ts";

export type { NextBatch, TestDecision } from "./decide-batch-shapes.ts";

export interface DecideInput {
  tests: readonly string[];
  /** What the previous call returned as `state`; absent on the first call. */
  state?: DecideState;
  /** The batches run since that call (every batch so far, without `state`), oldest first. */
  batches?: readonly (readonly DecideRecord[])[];
  /**
   * The stream's history of the baseline payload, each payload one baseline run on clusters of its
   * own (payloads differ only): new clusters started on the PR payload stand against it, one
   * payload each, before any is upgraded. Give the same history on every call of a run.
   */
  history?: readonly DecideHistoryPayload[];
  /**
   * Crossover: the clusters still there to be upgraded; absent: all. One that ran the baseline
   * payload and is gone before its upgrade (it failed, or the run that held it ended) is never
   * asked for; what it cost stays spent.
   */
  held?: readonly string[];
  /**
   * Crossover: the most clusters the run may hold at once (its cluster source's quota), at least 2
   * (a confirmation pair); absent: as many as the batch shapes ask (at most 8). A batch never asks
   * for more, counting the clusters that wait for their PR half: a run that did would wait for
   * quota its own clusters hold.
   */
  atOnce?: number;
  /** Detect a rise from `from` to `to` in a test's failure probability (absolute points: to − from). */
  target: { from: number; to: number };
  payloads: "same" | "differ";
  /** In test executions: a new cluster, and moving a cluster from the baseline payload to the PR payload. */
  costs: { cluster: number; upgrade: number };
  /** In test executions, everything included. */
  budget: number;
  /** Chance that some test is called a regression when none changed (family-wise, over every look). */
  alpha?: number;
  /** Chance a test whose rise is at least the target is found, not called clean. */
  power?: number;
}

export interface Decision {
  design: "shared clusters" | "crossover by upgrade";
  target: { from: number; to: number; rise: number };
  tests: TestDecision[];
  next: NextBatch | null;
  spent: number;
  budget: number;
  stopped: null | "all tests decided" | "budget spent";
  /**
   * Crossover only: `suspect`, what contrasts through an upgrade must reach to make a test a
   * suspect; `confirmedClean`, what a suspect's confirmation must reach to call it clean.
   */
  thresholds: { regression: number; clean: number; suspect?: number; confirmedClean?: number };
  method: string;
  notes: string[];
}

/**
 * The decision step of an adaptive run: after each batch, per test — regression, clean at the
 * target, or undecided — and the next batch (the undecided tests, how many iterations, which
 * clusters serve which arm), or none when every test is decided or the budget is spent.
 *
 * Evidence is the per-cluster contrast of the arms on the same cluster, so cluster weather cancels:
 * with the same payload both arms interleave on the clusters held (a contrast per cluster and batch);
 * with different payloads a cluster runs the baseline payload, is upgraded and runs the PR payload,
 * never the reverse and never both arms in one batch (one contrast per cluster). Decisions come from
 * anytime-valid e-processes (`pairedEValues`): a test is a regression when its e-value reaches
 * (tests)/α — Ville's inequality and a union bound keep the chance of any false regression at α
 * however many batches run — and clean when the e-value against a rise of the target reaches
 * 1/(1 − power).
 *
 * An upgrade can itself make a test fail more often, and a contrast through an upgrade counts that
 * as the PR's. So in a crossover such a test only becomes a suspect (`markSuspects`, at a threshold
 * that spends no α: `suspicionThreshold`): later batches start pairs of new clusters, one on each
 * payload, neither ever upgraded, and the suspect is a regression once a sign test on those pairs'
 * contrasts (unpaired: each carries both clusters' weather; `confirmationEValues`) reaches
 * π²n²/(6α) for the n-th suspect — thresholds whose α shares sum to α, a confirmed suspect's share
 * passing on to the next — or clean once they show the rise is below the target. A crossover's
 * miss rate 1 − power is split between its two ways to call a test clean.
 *
 * Each call reads only the batches run since the previous one: it takes back the `state` that call
 * returned (plain JSON, so a run stopped between batches goes on from the saved state) and returns
 * it with those batches read.
 */
export function decideBatch(input: DecideInput): { decision: Decision; state: DecideState } {
  const { tests, target, payloads, costs, budget, alpha = 0.05, power = 0.8 } = input;
  const rise = target.to - target.from;
  const given = input.state ?? { payloads, rise, batches: 0, records: 0, clusters: [], tests: [] };
  if (given.payloads !== payloads || given.rise !== rise)
    throw new DecideInputError(
      `the state given was made for payloads ${given.payloads} and a rise of ${given.rise}, not ${payloads} and ${rise}: a run keeps its design and target from its first batch to its last`,
    );
  let state = given;
  const atOnce = input.atOnce ?? Infinity;
  if (payloads === "differ" && atOnce < 2)
    throw new DecideInputError(
      `a crossover needs at least 2 clusters at once (a pair of new clusters confirms a suspect), not ${atOnce}: raise the cluster source's quota`,
    );
  const history = input.history ?? [];
  if (history.length > 0 && payloads === "same")
    throw new DecideInputError(
      "a history stands in for the baseline arm only when the payloads differ: with the same payload the shared clusters' paired contrasts cost no install, and a history contrast needs a new cluster each",
    );
  // A crossover's test whose rise reaches the target can be called clean two ways (by its
  // contrasts through an upgrade, or by its confirmation once a suspect): the miss rate 1 − power
  // is split, a quarter of it for the confirmation, so the two together miss at most 1 − power.
  const miss = 1 - power;
  const thresholds =
    payloads === "differ"
      ? {
          regression: tests.length / alpha,
          suspect: suspicionThreshold(tests.length, alpha),
          // Three significant digits, as the reasons print them (6.67, 20 for power 0.8).
          clean: Number((1 / (miss * 0.75)).toPrecision(3)),
          confirmedClean: Number((1 / (miss * 0.25)).toPrecision(3)),
        }
      : { regression: tests.length / alpha, clean: 1 / miss };
  for (const records of input.batches ?? [])
    state = markSuspects(
      readDecideBatch(state, records, history),
      thresholds.suspect ?? thresholds.regression,
    );
  const clusters = state.clusters.map((cluster) => cluster.name);
  const upgraded =
    payloads === "differ"
      ? state.clusters.filter((cluster) => cluster.firstPr !== undefined && cluster.baseline).length
      : 0;
  const spent = state.records + clusters.length * costs.cluster + upgraded * costs.upgrade;
  const evidence = new Map(state.tests.map((test) => [test.name, test]));
  const standing = state.clusters.filter((cluster) => cluster.history !== undefined).length;
  const none = pairedEValues({ contrasts: [], rise });
  const confirmations = confirmSuspects(state, alpha);

  const points = (value: number) => `${value >= 0 ? "+" : ""}${Math.round(value * 1000) / 10} points`;
  const decisions: TestDecision[] = tests.map((name) => {
    const known = evidence.get(name);
    const { contrasts, meanContrast, ...e } = known?.summary ?? { contrasts: 0, meanContrast: null, ...none };
    const seen = `${contrasts} cluster contrast(s)${meanContrast === null ? "" : `, mean ${points(meanContrast)}`}`;
    const confirmation = confirmations.get(name);
    const [decision, reason]: [TestDecision["decision"], string] = confirmation
      ? suspectDecision(confirmation, {
          crossover: `contrasts through an upgrade made it a suspect (e-value ≥ ${thresholds.suspect}; now ${e.regression.toPrecision(3)} over ${seen})`,
          clean: thresholds.confirmedClean!,
          rise: points(rise),
        })
      : e.regression >= thresholds.regression
        ? [
            "regression",
            `fails more often in the PR: e-value ${e.regression.toPrecision(3)} ≥ ${thresholds.regression} over ${seen}`,
          ]
        : e.clean >= thresholds.clean
          ? [
              "clean",
              `any rise is below ${points(rise)}: e-value ${e.clean.toPrecision(3)} ≥ ${thresholds.clean} over ${seen}`,
            ]
          : [
              "undecided",
              `${seen}: e-values ${e.regression.toPrecision(3)} (regression), ${e.clean.toPrecision(3)} (clean)`,
            ];
    return {
      name,
      decision,
      reason,
      contrasts,
      meanContrast,
      eRegression: e.regression,
      eClean: e.clean,
      executions: { ...(known?.executions ?? { pr: 0, baseline: 0 }) },
      clusters: known?.contrasts.length ?? 0,
      ...(confirmation ? { confirmation } : {}),
    };
  });

  const undecided = decisions.filter((test) => test.decision === "undecided").map((test) => test.name);
  const left = budget - spent;
  const known = new Set(clusters);
  let newIds = 0;
  const newId = () => {
    let id: string;
    do id = `cluster-${++newIds}`;
    while (known.has(id));
    return id;
  };
  let next: NextBatch | null = null;
  if (undecided.length > 0 && payloads === "same") {
    const { iterations } = SHARED;
    const perCluster = 2 * iterations * undecided.length;
    const held = clusters.length > 0 ? clusters : Array.from({ length: SHARED.clusters }, newId);
    const each = perCluster + (clusters.length > 0 ? 0 : costs.cluster);
    const count = Math.min(held.length, Math.floor(left / each));
    if (count > 0) {
      const chosen = held.slice(0, count);
      next = {
        tests: undecided,
        iterations,
        clusters: { pr: chosen, baseline: chosen },
        upgrade: [],
        cost: count * each,
        release: [],
      };
    }
  } else if (undecided.length > 0 && standing < history.length) {
    // History payloads left: new clusters on the PR payload alone, one contrast each against one.
    const iterations = CROSSOVER.againstHistory;
    const each = costs.cluster + iterations * undecided.length;
    const fresh = Array.from(
      {
        length: Math.max(
          0,
          Math.min(CROSSOVER.clusters, atOnce, history.length - standing, Math.floor(left / each)),
        ),
      },
      newId,
    );
    if (fresh.length > 0)
      next = {
        tests: undecided,
        iterations,
        clusters: { pr: fresh, baseline: [] },
        upgrade: [],
        cost: fresh.length * each,
        release: [],
      };
  } else if (undecided.length > 0) {
    next = planCrossoverBatch({
      state,
      decisions,
      ...(input.held ? { held: input.held } : {}),
      atOnce,
      costs,
      left,
      newId,
    });
  }

  const notes: string[] = [];
  if (history.length > 0)
    notes.push(
      `history: ${standing} of ${history.length} history payload(s) stood in for the baseline arm, each against one new cluster on the PR payload; not paired, so each such contrast carries both clusters' weather`,
    );
  if (payloads === "differ")
    notes.push(
      "payloads differ: each contrast is one cluster on the PR payload after its upgrade against the same cluster on the baseline payload before it; an upgrade can itself make a test fail more often, so a test those contrasts call a regression is one only once pairs of new clusters never upgraded (one on each payload, started after it was suspected) confirm it, and is clean if they show no rise",
    );
  const decision: Decision = {
    design: payloads === "same" ? "shared clusters" : "crossover by upgrade",
    target: { ...target, rise },
    tests: decisions,
    next,
    spent,
    budget,
    stopped: undecided.length === 0 ? "all tests decided" : next === null ? "budget spent" : null,
    thresholds,
    method: `per test, anytime-valid e-processes on per-cluster paired contrasts (betting, mixture over bets): regression at e ≥ ${tests.length}/${alpha} (any false regression ≤ ${alpha} over every look)${payloads === "differ" ? `; a suspect at e ≥ ${thresholds.suspect} through an upgrade, a regression once a sign test on pairs of new clusters never upgraded reaches π²n²/(6·${alpha}) for the n-th suspect (a confirmed suspect's share of ${alpha} passing on to the next)` : ""}, clean at e ≥ ${thresholds.clean}${thresholds.confirmedClean ? ` (a suspect's confirmation at e ≥ ${thresholds.confirmedClean})` : ""} against a rise of ${points(rise)} (power ${power})`,
    notes,
  };
  return { decision, state };
}

/**
 * What a crossover's contrasts through an upgrade must reach to make a test a suspect. A suspect is
 * never a regression on those contrasts, only once pairs of clusters never upgraded confirm it, so
 * this threshold spends no α: it trades installs between the crossover (a test that reaches it
 * sooner needs fewer upgraded clusters) and the pairs (a test suspected for nothing needs pairs
 * until they clear it, and takes a number, and so a share of α, from the suspects after it). A test
 * that neither the PR nor the upgrade changes reaches it with chance at most 1/threshold (Ville),
 * so a run of any size has on average at most ten such suspects, and at most α·tests when that is
 * fewer. `bench/analysis/adaptive-simulation.ts` measured tests/α (what a regression needs) and
 * lower: at 500 tests, 50 took a +30-point crossover from 121.9 to 87.7 cluster-hours and left a
 * null one's unchanged (docs/analysis.md).
 */
function suspicionThreshold(tests: number, alpha: number): number {
  return Math.max(1 / alpha, tests / 10);
}

/**
 * Each suspect's confirmation: its pairs, e-values and the threshold its regression e-value must
 * reach. The n-th suspect's share of α is α_n = 6α/(π²n²), shares that sum to α over every suspect
 * a run may have; and once a suspect is confirmed its share passes on to the next (a fixed sequence
 * with fallback, Wiens 2003, consonant under closed testing), so a run with several regressions
 * does not pay ever larger thresholds for each. Each confirmation is an e-process of its own on
 * clusters started after its test was suspected (which only contrasts through an upgrade decided),
 * so Ville's inequality holds for it whatever made it a suspect. Before the first false
 * confirmation every share passed on came from a true regression, so a union bound over the
 * suspects keeps the chance of any false regression at α.
 */
function confirmSuspects(
  state: DecideState,
  alpha: number,
): Map<string, NonNullable<TestDecision["confirmation"]>> {
  const suspects = state.tests
    .flatMap((test) => (test.suspect ? [{ test, order: test.suspect.order }] : []))
    .sort((a, b) => a.order - b.order);
  const confirmations = new Map<string, NonNullable<TestDecision["confirmation"]>>();
  let passedOn = 0;
  for (const { test, order } of suspects) {
    const share = (6 * alpha) / (Math.PI ** 2 * order ** 2) + passedOn;
    const e = confirmationEValues({ contrasts: test.confirmations, rise: state.rise });
    const threshold = 1 / share;
    confirmations.set(test.name, {
      pairs: test.confirmations.length,
      eRegression: e.regression,
      eClean: e.clean,
      threshold,
    });
    passedOn = e.regression >= threshold ? share : 0;
  }
  return confirmations;
}

/** A suspect's decision from its confirmation on clusters never upgraded. */
function suspectDecision(
  confirmation: NonNullable<TestDecision["confirmation"]>,
  words: { crossover: string; clean: number; rise: string },
): [TestDecision["decision"], string] {
  const { pairs, eRegression, eClean, threshold } = confirmation;
  const confirmed = `${pairs} pair(s) of new clusters never upgraded`;
  if (eRegression >= threshold)
    return [
      "regression",
      `fails more often in the PR: ${words.crossover}, confirmed on ${confirmed} (e-value ${eRegression.toPrecision(3)} ≥ ${threshold.toPrecision(3)})`,
    ];
  if (eClean >= words.clean)
    return [
      "clean",
      `the rise through an upgrade (${words.crossover}) did not show on ${confirmed}: any rise the PR makes is below ${words.rise} (e-value ${eClean.toPrecision(3)} ≥ ${words.clean}); the upgrade itself makes this test fail more often`,
    ];
  return [
    "undecided",
    `${words.crossover}, and an upgrade alone can do that: confirming on new clusters never upgraded — ${confirmed} so far, e-values ${eRegression.toPrecision(3)} (regression, needs ${threshold.toPrecision(3)}), ${eClean.toPrecision(3)} (clean)`,
  ];
}
