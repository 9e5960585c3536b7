import type { Lifecycle } from "@netstress/core/model/ote-result-fields.ts";
import type { Disruption } from "@netstress/core/model/disruption-schema.ts";

/** One iteration's disruption as one test reported it (the lowest attempt that reported any). */
export interface DisruptionSample {
  iteration: number;
  attempt: number;
  cluster?: string;
  /** The record's startTime (OTE's `YYYY-MM-DD HH:MM:SS.ffffff UTC`), where the timeline starts. */
  startTime?: string;
  result: "passed" | "failed" | "skipped";
  entries: readonly Disruption[];
}

export const DISRUPTION_VERDICTS = ["regression", "stable", "inconclusive"] as const;
export type DisruptionVerdict = (typeof DISRUPTION_VERDICTS)[number];

/** One arm of one row: the distribution of disruptedSeconds over its iterations. */
export interface DisruptionArmSummary {
  /** Iterations that reported this path (one sample each). */
  samples: number;
  /** Distinct clusters those iterations ran on (0 when the records name none). */
  clusters: number;
  /** Nearest-rank percentiles of disruptedSeconds; null without samples. */
  p50: number | null;
  p99: number | null;
  /** True when P99 is simply the largest sample (fewer than 100 samples). */
  p99IsMax: boolean;
  mean: number | null;
  max: number | null;
  /** Iterations whose disruption was above the budget the test reported. */
  overBudget: number;
  /** Total intervals reported, and the largest budget seen. */
  intervals: number;
  budgetSeconds: number | null;
}

/** One test × path × connection, compared between the arms. */
export interface DisruptionRow {
  test: string;
  component: string;
  lifecycle: Lifecycle;
  path: string;
  connection: "new" | "reused";
  pr: DisruptionArmSummary;
  baseline: DisruptionArmSummary;
  verdict: DisruptionVerdict;
  /** One sentence a PR author can act on. */
  reason: string;
  /** One-sided rank test (PR disrupted longer), when it could run. */
  pValue: number | null;
  /** Benjamini–Hochberg over the rows that could reach significance. */
  qValue: number | null;
  /**
   * Smallest extra disruption (seconds, added to every PR iteration) that these samples would have
   * flagged; null when judged a regression or when no shift could have been told apart.
   */
  minDetectableShiftSeconds: number | null;
}

export interface DisruptionSettings {
  /** False discovery rate across rows. */
  q: number;
  /** Fewer samples than this in either arm is inconclusive. */
  minimumSamples: number;
  /** Guard: the PR's mean disruption must exceed the baseline's by at least this much. */
  minimumShiftSeconds: number;
}

export const DEFAULT_DISRUPTION_SETTINGS: DisruptionSettings = {
  q: 0.05,
  minimumSamples: 6,
  minimumShiftSeconds: 1,
};

export interface DisruptionAnalysis {
  /** "cluster": clusters are the units the test compares; "iteration": iterations are. */
  unit: "cluster" | "iteration";
  /** One sentence on how rows were compared. */
  method: string;
  familySize: number;
  settings: DisruptionSettings;
  rows: DisruptionRow[];
  counts: Record<DisruptionVerdict, number>;
  /** Samples per test and arm, for the timeline (intervals, per iteration). */
  samples: { test: string; pr: readonly DisruptionSample[]; baseline: readonly DisruptionSample[] }[];
}
