import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Lifecycle } from "@netstress/core/model/ote-result-fields.ts";
import type { BinarySource } from "@netstress/core/model/result-record.ts";
import type { DisruptionAnalysis, DisruptionSample } from "./disruption-types.ts";
import type { HistoryRuleOutcome } from "./history-rule.ts";

/**
 * Counts of iterations (not attempts) for one test in one arm. runs = passes + failures + flakes:
 * an iteration is a pass when every attempt passed, a flake when an attempt failed and a retry
 * passed, a failure when no attempt passed. Iterations in which the test was only skipped are skips
 * and do not count as runs.
 */
export interface ArmCounts {
  runs: number;
  passes: number;
  failures: number;
  flakes: number;
  skips: number;
}

export interface FirstFailure {
  iteration: number;
  attempt: number;
  message: string;
  harnessError?: string;
}

/** One test in one arm after folding its records. */
export interface ArmAggregate extends ArmCounts {
  /** Outcome bits (see OUTCOME) per iteration index. */
  outcomes: readonly number[];
  executions: number;
  totalDurationMs: number;
  source?: BinarySource;
  firstFailure?: FirstFailure;
  /** Per iteration that reported disruption (sorted by iteration); absent when none did. */
  disruption?: DisruptionSample[];
}

export interface AggregatedTest {
  name: string;
  component: string;
  lifecycle: Lifecycle;
  /** The first name the test was known by (its spec's originalName), when it has one. */
  originalName?: string;
  /** The baseline arm's name of the test, when the PR renamed it (joined through originalName). */
  baselineName?: string;
  /** The spec's labels and tags (from the PR arm's binary when it ran there). */
  labels?: string[];
  tags?: Record<string, string>;
  pr?: ArmAggregate;
  baseline?: ArmAggregate;
}

/** Which cluster under test each iteration of an arm ran against. */
export interface ArmClusters {
  /** Distinct cluster labels, in order of first iteration. */
  names: string[];
  /** Index into `names` per iteration; -1 where the iteration named no cluster or nothing ran. */
  ofIteration: number[];
  /** Records of this arm without a `cluster`. */
  unlabelled: number;
  /** Records naming a different cluster than the rest of their iteration. */
  conflicting: number;
}

export interface AggregatedRun {
  arches: Arch[];
  /** Per arm, where its iterations ran (from the records' `cluster`). */
  clusters?: { pr: ArmClusters; baseline: ArmClusters };
  /** Distinct iteration indexes in which anything ran, per arm. */
  iterations: { pr: number; baseline: number };
  tests: AggregatedTest[];
  records: number;
  duplicates: number;
}

/** Pooled history of the released payload, per test: runs and clean passes. */
export interface HistoryCounts {
  runs: number;
  passes: number;
}

export const VERDICT_CLASSES = [
  "regression",
  "new-flake",
  "known-flake",
  "fixed",
  "consistent-failure",
  "stable",
  "inconclusive",
  "new-test",
  "removed",
] as const;
export type VerdictClass = (typeof VERDICT_CLASSES)[number];

export type AnalysisConclusion = "success" | "neutral" | "failure";

export interface TestVerdict {
  name: string;
  component: string;
  lifecycle: Lifecycle;
  /** The baseline arm's name of a test the PR renamed (joined through its originalName). */
  baselineName?: string;
  /** The spec's labels and tags: the report filters by them. */
  labels?: string[];
  tags?: Record<string, string>;
  /** Taken out of PR conclusions (judged as informing), and why. */
  quarantine?: { reason: string; since: string };
  class: VerdictClass;
  /** One sentence a PR author can act on. */
  reason: string;
  pr: ArmCounts;
  baseline: ArmCounts;
  /** One-sided Fisher p-value (PR fails more often), when both sides ran. */
  pValue: number | null;
  /** Benjamini–Hochberg q-value, when the test could reach significance and so is in the family. */
  qValue: number | null;
  /** Smallest PR failure rate these run counts detect with 80% power; null when judged a regression or nothing was detectable. */
  minDetectableFailureRate: number | null;
  historyRule?: HistoryRuleOutcome;
  /** Failed iterations cluster by cluster, when the cluster rule ran and the test ran in both arms. */
  clusters?: TestClusters;
  prAggregate?: ArmAggregate;
  baselineAggregate?: ArmAggregate;
}

export interface ClusterCount {
  cluster: string;
  runs: number;
  /** Failed iterations (a flake counts). */
  failed: number;
}

export interface TestClusters {
  pr: ClusterCount[];
  baseline: ClusterCount[];
  /** This test's own quasi-binomial dispersion between clusters, null when its counts carry none. */
  ownDispersion: number | null;
  /** Moderated dispersion used by the test (1 = clusters alike). */
  dispersion: number;
  /** The intra-cluster correlation of failures the test used. */
  rho: number;
  /** Set when one cluster carried most (≥ 60%, at least 3) of the test's failed iterations in an arm. */
  dominant?: { arm: "pr" | "baseline"; cluster: string; failed: number; of: number };
}

/** One cluster under test across all tests: how much more it failed than its tests' rates predict. */
export interface ClusterWeather {
  arm: "pr" | "baseline";
  cluster: string;
  iterations: number;
  /** Failed test-iterations on this cluster. */
  failed: number;
  /** Failed test-iterations expected from each test's rate over both arms. */
  expected: number;
  /** failed / expected. */
  ratio: number;
  /** Significantly worse than expected across many tests at once (cluster-wide badness). */
  bad: boolean;
}

export interface ClusterAnalysis {
  /** Distinct clusters per arm. */
  counts: { pr: number; baseline: number };
  weather: ClusterWeather[];
  /** The empirical-Bayes prior of the between-cluster dispersion, null when no test carried an estimate. */
  prior: { phi: number; df: number } | null;
  /** Median moderated dispersion over the tests that failed at all: how different the clusters were. */
  typicalDispersion: number;
  /** Both arms ran on one cluster each: nothing separates the PR from the cluster. */
  onePerArm: boolean;
}

export interface AnalysisSettings {
  /** False discovery rate for Benjamini–Hochberg. */
  q: number;
  /** Guard: at least this many failed PR iterations. */
  minimumPrFailures: number;
  /** Guard: the PR pass rate must be more than this far below the baseline's (0.05 = 5 points). */
  minimumPassRateDrop: number;
  /** Power at which minDetectableFailureRate is stated. */
  power: number;
  /** Fewer runs than this in either arm is inconclusive. */
  minimumRuns: number;
}

export const DEFAULT_ANALYSIS_SETTINGS: AnalysisSettings = {
  q: 0.05,
  minimumPrFailures: 3,
  minimumPassRateDrop: 0.05,
  power: 0.8,
  minimumRuns: 6,
};

export interface Analysis {
  conclusion: AnalysisConclusion;
  /** Why the conclusion is what it is, one sentence. */
  conclusionReason: string;
  arch: Arch | null;
  iterations: { pr: number; baseline: number };
  baselineKind: "arm" | "history" | "arm+history";
  /**
   * Which regression rule ran: "cluster" when every record names its cluster (iterations grouped by
   * cluster, dispersion between clusters accounted for), "iteration" otherwise (iterations as
   * independent draws).
   */
  rule: "cluster" | "iteration";
  /** One sentence on which rule ran and why, shown in every report. */
  ruleNote: string;
  clusters?: ClusterAnalysis;
  /** How many tests were in the Benjamini–Hochberg family (could reach significance). */
  familySize: number;
  settings: AnalysisSettings;
  tests: TestVerdict[];
  counts: Record<VerdictClass, number>;
  /** Disruption per test, path and connection, when any test reported it (see disruption-compare.ts). */
  disruption?: DisruptionAnalysis;
}
