/** A test as an adaptive run's decision step left it (the run record's `adaptive.decision.tests`). */
export interface AdaptiveTestSummary {
  name: string;
  decision: "regression" | "clean" | "undecided";
  reason: string;
  decidedAfter?: number;
  executions: { pr: number; baseline: number };
  clusters: number;
  contrasts: number;
  meanContrast: number | null;
  informing?: boolean;
}

/** What an adaptive run decided, ran and spent (the run record's `adaptive`, with its cluster-hours). */
export interface AdaptiveSummary {
  design: "shared clusters" | "crossover by upgrade";
  batches: number;
  tests: AdaptiveTestSummary[];
  stopped: "all tests decided" | "budget spent" | null;
  spent: number;
  budget: number;
  target: { from: number; to: number };
  method: string;
  /** What the decision step said of how it decided: the history that stood in for the baseline arm, how contrasts were made. */
  notes?: string[];
  clusterHours?: number;
  /**
   * Crossover by upgrade: each cluster moved to the PR payload, how long that took, or why it was
   * not (and was given back).
   */
  upgrades?: { id: string; minutes: number; failed?: string }[];
}

/** One test's line of an adaptive run's report: why it stopped and what it could have seen. */
export interface AdaptiveTestRow {
  name: string;
  decision: AdaptiveTestSummary["decision"];
  informing: boolean;
  stopped: string;
  executions: string;
  clusters: number;
  effect: string;
  reason: string;
}

const points = (value: number) => `${value >= 0 ? "+" : ""}${Math.round(value * 1000) / 10} points`;

/**
 * The per-test rows of an adaptive run, regressions first, then undecided, then clean (each by
 * name): when and why it stopped, its executions per arm and clusters, and the effect it could see
 * — the rise it rules out (clean), the rise it showed (regression), or that it could not yet tell.
 */
export function adaptiveTestRows(summary: AdaptiveSummary): AdaptiveTestRow[] {
  const rise = points(summary.target.to - summary.target.from);
  const order = { regression: 0, undecided: 1, clean: 2 };
  return summary.tests
    .toSorted((a, b) => order[a.decision] - order[b.decision] || a.name.localeCompare(b.name))
    .map((test) => ({
      name: test.name,
      decision: test.decision,
      informing: test.informing === true,
      stopped:
        test.decision === "undecided"
          ? summary.stopped === "budget spent"
            ? "still undecided when the budget was spent"
            : "still undecided when the run stopped"
          : `decided ${test.decision} after batch ${test.decidedAfter ?? summary.batches}`,
      executions: `${test.executions.pr} / ${test.executions.baseline}`,
      clusters: test.clusters,
      effect:
        test.decision === "clean"
          ? `rules out a rise of ${rise} or more`
          : test.decision === "regression"
            ? `fails ${points(test.meanContrast ?? 0)} more often in the PR (mean over ${test.contrasts} cluster contrast(s))`
            : `cannot yet tell a rise of ${rise} from none (${test.contrasts} cluster contrast(s))`,
      reason: test.reason,
    }));
}
