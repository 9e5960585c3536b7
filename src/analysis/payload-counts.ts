/**
 * Per-test counts of the runs of one payload on one stream and arch: what the history keeps per
 * payload, and what trends and changepoints are computed from (pure types).
 */

/**
 * One test's iterations on one payload. executions = iterations in which it ran; failures =
 * iterations no attempt passed; flakes = iterations an attempt failed and a retry passed (so clean
 * passes = executions − failures − flakes, and a flake counts as failed everywhere in the analysis).
 */
export interface TestCounts {
  executions: number;
  failures: number;
  flakes: number;
  /** clusters seen */
  clusters?: number;
}

export interface PayloadCounts {
  /** The release-controller's name, e.g. 4.19.0-0.nightly-2026-12-01-000000 (or the payload pullspec if unknown). */
  release: string;
  /** Pullspec by digest. */
  payload: string;
  /** ISO time of the first run that joined. */
  recordedAt: string;
  /** Runs pooled into this entry. */
  runs: number;
  tests: Record<string, TestCounts>;
}
