import { NetstressError } from "../errors/netstress-error.ts";
import { pairedEValues } from "./paired-e-values.ts";

/** What the decision step reads of a result record. */
export interface DecideRecord {
  arm: "pr" | "baseline";
  cluster: string;
  iteration: number;
  name: string;
  result: "passed" | "failed" | "skipped";
}

export interface DecideInput {
  tests: readonly string[];
  /** The batches run so far, oldest first; none on the first call. */
  batches: readonly (readonly DecideRecord[])[];
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

export interface TestDecision {
  name: string;
  decision: "regression" | "clean" | "undecided";
  reason: string;
  /** Cluster contrasts the decision rests on. */
  contrasts: number;
  meanContrast: number | null;
  eRegression: number;
  eClean: number;
  executions: { pr: number; baseline: number };
  clusters: number;
}

export interface NextBatch {
  tests: string[];
  /** Iterations per cluster in this batch. */
  iterations: number;
  clusters: { pr: string[]; baseline: string[] };
  /** Clusters to upgrade from the baseline payload to the PR payload before the batch. */
  upgrade: string[];
  /** What the batch costs, in test executions. */
  cost: number;
}

export interface Decision {
  design: "shared clusters" | "crossover by upgrade";
  target: { from: number; to: number; rise: number };
  tests: TestDecision[];
  next: NextBatch | null;
  spent: number;
  budget: number;
  stopped: null | "all tests decided" | "budget spent";
  thresholds: { regression: number; clean: number };
  method: string;
  notes: string[];
}

/** The records break the one-payload-at-a-time rule, or name no cluster: nothing sound can be decided. */
export class DecideInputError extends NetstressError<"decide-input"> {
  override readonly name = "DecideInputError";
  constructor(message: string) {
    super(message, { code: "decide-input" });
  }
}

/** Shared clusters: clusters held and iterations per arm on each per batch (small batches: a contrast per cluster each). */
const SHARED = { clusters: 3, iterations: 2 };
/** Crossover: new clusters started per batch and iterations per arm on each (each cluster gives one contrast). */
const CROSSOVER = { clusters: 4, iterations: 4 };

interface Tally {
  runs: number;
  failed: number;
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
 */
export function decideBatch(input: DecideInput): Decision {
  const { tests, batches, target, payloads, costs, budget, alpha = 0.05, power = 0.8 } = input;
  const rise = target.to - target.from;
  const wanted = new Set(tests);
  // Per test, batch, cluster and arm: iterations run and failed (a failed attempt fails its iteration).
  const outcomes = new Map<string, Map<number, boolean>>();
  const executions = new Map<string, { pr: number; baseline: number }>();
  const armsOf = new Map<string, { pr: Set<number>; baseline: Set<number> }>();
  let spent = 0;
  batches.forEach((records, batch) => {
    for (const record of records) {
      spent++;
      const arms = armsOf.get(record.cluster) ?? { pr: new Set<number>(), baseline: new Set<number>() };
      armsOf.set(record.cluster, arms);
      arms[record.arm].add(batch);
      if (!wanted.has(record.name)) continue;
      const counted = executions.get(record.name) ?? { pr: 0, baseline: 0 };
      counted[record.arm]++;
      executions.set(record.name, counted);
      if (record.result === "skipped") continue;
      const key = `${record.name}\n${batch}\n${record.cluster}\n${record.arm}`;
      const iterations = outcomes.get(key) ?? new Map<number, boolean>();
      outcomes.set(key, iterations);
      iterations.set(
        record.iteration,
        (iterations.get(record.iteration) ?? false) || record.result === "failed",
      );
    }
  });
  const clusters = [...armsOf.keys()];
  let upgraded = 0;
  if (payloads === "differ") {
    for (const [cluster, arms] of armsOf) {
      const both = [...arms.pr].find((batch) => arms.baseline.has(batch));
      if (both !== undefined)
        throw new DecideInputError(
          `cluster ${cluster} ran both arms in batch ${both + 1}: with different payloads a cluster runs one payload at a time`,
        );
      const firstPr = Math.min(...arms.pr);
      const lateBaseline = [...arms.baseline].find((batch) => batch > firstPr);
      if (lateBaseline !== undefined)
        throw new DecideInputError(
          `cluster ${cluster} ran the baseline payload in batch ${lateBaseline + 1} after the PR payload in batch ${firstPr + 1}: a cluster moves from baseline to PR, never back`,
        );
      if (arms.pr.size > 0 && arms.baseline.size > 0) upgraded++;
    }
  }
  spent += clusters.length * costs.cluster + upgraded * costs.upgrade;

  const tally = (name: string, batch: number, cluster: string, arm: "pr" | "baseline"): Tally => {
    const iterations = outcomes.get(`${name}\n${batch}\n${cluster}\n${arm}`);
    let failed = 0;
    for (const value of iterations?.values() ?? []) if (value) failed++;
    return { runs: iterations?.size ?? 0, failed };
  };
  const contrastsOf = (name: string): { contrasts: number[]; clusters: Set<string> } => {
    const contrasts: number[] = [];
    const used = new Set<string>();
    const add = (cluster: string, pr: Tally, baseline: Tally) => {
      if (pr.runs === 0 || baseline.runs === 0) return;
      contrasts.push(pr.failed / pr.runs - baseline.failed / baseline.runs);
      used.add(cluster);
    };
    for (const cluster of clusters) {
      const arms = armsOf.get(cluster)!;
      if (payloads === "same") {
        for (const batch of arms.pr)
          if (arms.baseline.has(batch))
            add(cluster, tally(name, batch, cluster, "pr"), tally(name, batch, cluster, "baseline"));
        continue;
      }
      if (arms.pr.size === 0) continue;
      // The cluster's first PR batch against everything it ran on the baseline payload before it.
      const pr = tally(name, Math.min(...arms.pr), cluster, "pr");
      const baseline: Tally = { runs: 0, failed: 0 };
      for (const batch of arms.baseline) {
        const part = tally(name, batch, cluster, "baseline");
        baseline.runs += part.runs;
        baseline.failed += part.failed;
      }
      add(cluster, pr, baseline);
    }
    return { contrasts, clusters: used };
  };

  const thresholds = { regression: tests.length / alpha, clean: 1 / (1 - power) };
  const points = (value: number) => `${value >= 0 ? "+" : ""}${Math.round(value * 1000) / 10} points`;
  const decisions: TestDecision[] = tests.map((name) => {
    const { contrasts, clusters: used } = contrastsOf(name);
    const e = pairedEValues({ contrasts, rise });
    const meanContrast =
      contrasts.length > 0 ? contrasts.reduce((sum, x) => sum + x, 0) / contrasts.length : null;
    const seen = `${contrasts.length} cluster contrast(s)${meanContrast === null ? "" : `, mean ${points(meanContrast)}`}`;
    const [decision, reason]: [TestDecision["decision"], string] =
      e.regression >= thresholds.regression
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
      contrasts: contrasts.length,
      meanContrast,
      eRegression: e.regression,
      eClean: e.clean,
      executions: executions.get(name) ?? { pr: 0, baseline: 0 },
      clusters: used.size,
    };
  });

  const undecided = decisions.filter((test) => test.decision === "undecided").map((test) => test.name);
  const left = budget - spent;
  let newIds = 0;
  const newId = () => {
    let id: string;
    do id = `cluster-${++newIds}`;
    while (armsOf.has(id));
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
      };
    }
  } else if (undecided.length > 0) {
    const { iterations } = CROSSOVER;
    const run = iterations * undecided.length;
    // Clusters that ran the baseline payload and wait for the PR payload: finishing them comes first.
    const waiting = clusters.filter((cluster) => armsOf.get(cluster)!.pr.size === 0);
    const finishing = waiting.slice(0, Math.max(0, Math.floor(left / (costs.upgrade + run))));
    const afterFinishing = left - finishing.length * (costs.upgrade + run);
    // A new cluster is started only when its PR half is paid for too.
    const starting = Math.min(
      CROSSOVER.clusters,
      Math.floor(afterFinishing / (costs.cluster + run + costs.upgrade + run)),
    );
    const fresh = Array.from({ length: Math.max(0, starting) }, newId);
    if (finishing.length + fresh.length > 0)
      next = {
        tests: undecided,
        iterations,
        clusters: { pr: finishing, baseline: fresh },
        upgrade: finishing,
        cost: finishing.length * (costs.upgrade + run) + fresh.length * (costs.cluster + run),
      };
  }

  const notes: string[] = [];
  if (payloads === "differ")
    notes.push(
      "payloads differ: each contrast is one cluster on the PR payload after its upgrade against the same cluster on the baseline payload before it; whatever an upgrade itself changes on a cluster counts as the PR's effect (a cluster never goes back, so it cannot be measured apart)",
    );
  return {
    design: payloads === "same" ? "shared clusters" : "crossover by upgrade",
    target: { ...target, rise },
    tests: decisions,
    next,
    spent,
    budget,
    stopped: undecided.length === 0 ? "all tests decided" : next === null ? "budget spent" : null,
    thresholds,
    method: `per test, anytime-valid e-processes on per-cluster paired contrasts (betting, mixture over bets): regression at e ≥ ${tests.length}/${alpha} (any false regression ≤ ${alpha} over every look), clean at e ≥ ${thresholds.clean} against a rise of ${points(rise)} (power ${power})`,
    notes,
  };
}
