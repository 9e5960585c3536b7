/** What the decision step says of a test, and of the batch it asks for next; the sizes of its batches. */

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
  /**
   * Crossover: its contrasts through an upgrade called it a regression; it is one only once
   * contrasts of new clusters that were never upgraded confirm it (an upgrade alone can make a test
   * fail more often).
   */
  confirmation?: { pairs: number; eRegression: number; eClean: number; threshold: number };
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
  /**
   * Clusters held for a PR half that no batch will ask for (every undecided test is a suspect,
   * which only clusters never upgraded decide): give them back now.
   */
  release: string[];
}

/** Shared clusters: clusters held and iterations per arm on each per batch (small batches: a contrast per cluster each). */
export const SHARED = { clusters: 3, iterations: 2 };
/**
 * Crossover: new clusters started per batch; iterations per arm on each; iterations per block (each
 * block of a cluster's PR half gives one contrast against the same block of its baseline half: the
 * shared clusters' unit of 2 iterations per arm); and iterations of a new cluster on the PR payload
 * that stands against a history payload (one contrast, whatever its iterations). 8 iterations a
 * half (4 contrasts for an install and an upgrade) cost least of 4, 6, 8, 12 and 16 in
 * `bench/analysis/adaptive-simulation.ts`. A batch of confirmation pairs alone (every undecided test
 * a suspect) runs 16 iterations: its executions are a few tests', and its contrasts' signs surer
 * (at +30 points 48.3 cluster-hours against 50.8 at 8, and 48.2 at 32; 200 runs each).
 */
export const CROSSOVER = {
  clusters: 4,
  iterations: 8,
  block: SHARED.iterations,
  againstHistory: 4,
  confirmIterations: 16,
};
