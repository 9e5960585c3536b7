import { clusterExactTest, type ClusterCounts } from "./cluster-exact-test.ts";
import {
  countByCluster,
  moderateDispersions,
  sharedClusterCounts,
  type RuleChoice,
  type TestDispersion,
} from "./cluster-rule.ts";
import { failedIterations } from "./failed-iterations.ts";
import { fisherExactGreater, fisherMinimumPValue } from "./fisher-exact.ts";
import type { Comparison } from "./flag-rule.ts";
import type { JudgeCache } from "./judge-cache.ts";
import type {
  AggregatedRun,
  AggregatedTest,
  AnalysisSettings,
  ArmCounts,
  HistoryCounts,
  TestClusters,
} from "./types.ts";

/** One test as the family and the classification see it: its counts and both one-sided tests. */
export interface Candidate {
  test: AggregatedTest;
  pr: ArmCounts;
  baseline: ArmCounts;
  history?: HistoryCounts;
  /** What the regression test compared; absent when an arm has no runs or one cluster per arm. */
  comparison?: Comparison;
  /** That the PR fails more often; null when there is nothing to compare. */
  pValue: number | null;
  /** Whether pValue could reach the level at all: only such tests join the multiple-testing family. */
  testable: boolean;
  /** That the PR fails less often: set when the PR never failed and the baseline did. */
  improvementPValue?: number;
  /** Per-cluster detail, for tests that failed somewhere under the cluster rule. */
  clusters?: TestClusters;
  /** The per-cluster counts behind `clusters`, for the run's cluster weather. */
  clusterArms?: readonly [ClusterCounts, ClusterCounts];
}

type ClusterRule = Extract<RuleChoice, { rule: "cluster" }>;
type ModeratedDispersions = ReturnType<typeof moderateDispersions>;

const EMPTY: ArmCounts = { runs: 0, passes: 0, failures: 0, flakes: 0, skips: 0 };

function countsOf(aggregate: ArmCounts | undefined): ArmCounts {
  if (!aggregate) return EMPTY;
  const { runs, passes, failures, flakes, skips } = aggregate;
  return { runs, passes, failures, flakes, skips };
}

/**
 * A test's pooled history across its names: the released payload's runs recorded it under its old
 * name (the PR's `originalName`, or the baseline arm's name for it) until the rename was released.
 */
function historyOf(
  history: ReadonlyMap<string, HistoryCounts>,
  test: AggregatedTest,
): HistoryCounts | undefined {
  const entries = [...new Set([test.name, test.originalName, test.baselineName])].flatMap((name) => {
    const entry = name === undefined ? undefined : history.get(name);
    return entry ? [entry] : [];
  });
  if (entries.length <= 1) return entries[0];
  return entries.reduce((sum, e) => ({ runs: sum.runs + e.runs, passes: sum.passes + e.passes }));
}

function historyAsCounts(history: HistoryCounts): ArmCounts {
  return {
    runs: history.runs,
    passes: history.passes,
    failures: history.runs - history.passes,
    flakes: 0,
    skips: 0,
  };
}

/** Where most of an arm's failures came from, when one cluster carried most of them. */
function dominantCluster(clusters: Pick<TestClusters, "pr" | "baseline">): TestClusters["dominant"] {
  for (const arm of ["pr", "baseline"] as const) {
    const counts = clusters[arm];
    if (counts.length < 2) continue;
    const of = counts.reduce((sum, count) => sum + count.failed, 0);
    const top = counts.reduce((best, count) => (count.failed > best.failed ? count : best), counts[0]!);
    if (top.failed >= 3 && top.failed >= 0.6 * of)
      return { arm, cluster: top.cluster, failed: top.failed, of };
  }
  return undefined;
}

function describeClusters(
  rule: ClusterRule,
  [prClusters, baselineClusters]: readonly [ClusterCounts, ClusterCounts],
  dispersion: TestDispersion,
): TestClusters {
  const named = (counts: ClusterCounts, names: readonly string[]) =>
    counts.runs
      .map((runs, index) => ({ cluster: names[index]!, runs, failed: counts.failed[index]! }))
      .filter((count) => count.runs > 0);
  const perCluster = {
    pr: named(prClusters, rule.clusters.pr.names),
    baseline: named(baselineClusters, rule.clusters.baseline.names),
  };
  const dominant = dominantCluster(perCluster);
  return {
    ...perCluster,
    ownDispersion: dispersion.own.df > 0 ? dispersion.own.phi : null,
    dispersion: dispersion.phi,
    rho: dispersion.rho,
    ...(dominant ? { dominant } : {}),
  };
}

/** Sizes without empty clusters, as the tests take them; the shared array when a test ran every iteration. */
const sizesOf = (runs: readonly number[]) => (runs.every((n) => n > 0) ? runs : runs.filter((n) => n > 0));

/**
 * Each test's counts against its baseline — the baseline arm, else its pooled history — and the
 * one-sided tests of both directions: Fisher's exact test under the iteration rule; under the
 * cluster rule the cluster exact test at the test's moderated dispersion, fitted here across all
 * tests of the run.
 */
export function judgeCandidates({
  run,
  history,
  hasBaselineArm,
  rule,
  settings,
  cache,
}: {
  run: AggregatedRun;
  history: ReadonlyMap<string, HistoryCounts> | undefined;
  hasBaselineArm: boolean;
  rule: RuleChoice;
  settings: AnalysisSettings;
  cache: JudgeCache;
}): { candidates: Candidate[]; moderated: ModeratedDispersions | null } {
  const clusterRule = rule.rule === "cluster" ? rule : null;
  const shared = clusterRule && {
    pr: sharedClusterCounts(clusterRule.clusters.pr),
    baseline: sharedClusterCounts(clusterRule.clusters.baseline),
  };
  const clusterCounts = clusterRule
    ? run.tests.map((test) =>
        test.pr && test.baseline
          ? ([
              countByCluster(test.pr, clusterRule.clusters.pr, shared!.pr),
              countByCluster(test.baseline, clusterRule.clusters.baseline, shared!.baseline),
            ] as const)
          : null,
      )
    : [];
  const moderated = clusterRule ? moderateDispersions(clusterCounts) : null;
  const clusterTest = (
    prSizes: readonly number[],
    baselineSizes: readonly number[],
    prFailed: number,
    baselineFailed: number,
    rho: number,
  ) =>
    cache.clusterTest(
      `${cache.sizesKey(prSizes)}|${cache.sizesKey(baselineSizes)}|${prFailed}|${baselineFailed}|${rho}`,
      () => clusterExactTest({ prSizes, baselineSizes, prFailed, baselineFailed, rho }),
    );

  const candidates = run.tests.map((test, testIndex): Candidate => {
    const pr = countsOf(test.pr);
    const testHistory = history ? historyOf(history, test) : undefined;
    const baseline = hasBaselineArm
      ? countsOf(test.baseline)
      : testHistory
        ? historyAsCounts(testHistory)
        : EMPTY;
    // Every candidate has the same shape, absent fields undefined: tens of thousands of them stay fast.
    const candidate = (judged: Omit<Candidate, "test" | "pr" | "baseline" | "history">): Candidate => ({
      test,
      pr,
      baseline,
      history: testHistory,
      comparison: judged.comparison,
      pValue: judged.pValue,
      testable: judged.testable,
      improvementPValue: judged.improvementPValue,
      clusters: judged.clusters,
      clusterArms: judged.clusterArms,
    });
    if (pr.runs === 0 || baseline.runs === 0) return candidate({ pValue: null, testable: false });
    const prFailed = failedIterations(pr);
    const baselineFailed = failedIterations(baseline);
    const comparison: Comparison = {
      prRuns: pr.runs,
      baselineRuns: baseline.runs,
      baselineFailed,
      ...(testHistory ? { history: testHistory } : {}),
    };
    const improves = prFailed === 0 && baselineFailed > 0;
    const arms = clusterCounts[testIndex];
    const dispersion = moderated?.dispersions[testIndex];
    if (!clusterRule || !arms || !dispersion) {
      const table = {
        a: prFailed,
        b: pr.runs - prFailed,
        c: baselineFailed,
        d: baseline.runs - baselineFailed,
      };
      return candidate({
        comparison,
        pValue: fisherExactGreater(table),
        testable: fisherMinimumPValue(table) <= settings.q,
        improvementPValue: improves
          ? fisherExactGreater({ a: table.c, b: table.d, c: 0, d: pr.runs })
          : undefined,
      });
    }
    // Per-cluster detail only for tests that failed somewhere: tens of thousands of clean tests carry none.
    const failed = prFailed + baselineFailed > 0;
    const clusters = failed ? describeClusters(clusterRule, arms, dispersion) : undefined;
    const clusterArms = failed ? arms : undefined;
    if (clusterRule.onePerArm) return candidate({ pValue: null, testable: false, clusters, clusterArms });
    const prSizes = sizesOf(arms[0].runs);
    const baselineSizes = sizesOf(arms[1].runs);
    const { pValue, minimum } = clusterTest(prSizes, baselineSizes, prFailed, baselineFailed, dispersion.rho);
    return candidate({
      comparison: { ...comparison, clusters: { prSizes, baselineSizes, rho: dispersion.rho } },
      pValue,
      testable: minimum <= settings.q,
      improvementPValue: improves
        ? clusterTest(baselineSizes, prSizes, baselineFailed, 0, dispersion.rho).pValue
        : undefined,
      clusters,
      clusterArms,
    });
  });
  return { candidates, moderated };
}
