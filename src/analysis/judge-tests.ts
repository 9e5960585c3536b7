import { benjaminiHochberg } from "./benjamini-hochberg.ts";
import { clusterExactTest, type ClusterCounts } from "./cluster-exact-test.ts";
import {
  chooseRule,
  countByCluster,
  moderateDispersions,
  sharedClusterCounts,
  ONE_CLUSTER_PER_ARM,
  type TestDispersion,
} from "./cluster-rule.ts";
import { measureClusterWeather } from "./cluster-weather.ts";
import { failedIterations } from "./failed-iterations.ts";
import { failsTheRun, isFlakyNewTest } from "./fails-the-run.ts";
import { fisherExactGreater, fisherMinimumPValue } from "./fisher-exact.ts";
import { formatPercent as percent, formatPValue as formatP } from "./format-statistics.ts";
import { criticalFailureCount, passesGuards, type Comparison } from "./flag-rule.ts";
import { applyHistoryRule } from "./history-rule.ts";
import { minimumDetectableFailureRate } from "./minimum-detectable-failure-rate.ts";
import {
  DEFAULT_ANALYSIS_SETTINGS,
  VERDICT_CLASSES,
  type AggregatedRun,
  type AggregatedTest,
  type Analysis,
  type AnalysisSettings,
  type ArmCounts,
  type AnalysisConclusion,
  type HistoryCounts,
  type TestClusters,
  type TestVerdict,
  type VerdictClass,
} from "./types.ts";

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

interface Candidate {
  test: AggregatedTest;
  pr: ArmCounts;
  baseline: ArmCounts;
  history?: HistoryCounts;
  comparison?: Comparison;
  pValue: number | null;
  testable: boolean;
  clusters?: TestClusters;
}

function describeCounts(counts: ArmCounts): string {
  const flaked = counts.flakes > 0 ? ` (${counts.flakes} flaked)` : "";
  return `${failedIterations(counts)}/${counts.runs} failed${flaked}`;
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

function meanClusterSize({
  prSizes,
  baselineSizes,
}: {
  prSizes: readonly number[];
  baselineSizes: readonly number[];
}) {
  let runs = 0;
  for (const n of prSizes) runs += n;
  for (const n of baselineSizes) runs += n;
  return runs / Math.max(1, prSizes.length + baselineSizes.length);
}

/** ρ to two significant digits: the detectable rate is a rough statement, and it caches well. */
const roundedRho = (rho: number) => (rho === 0 ? 0 : Number(rho.toPrecision(2)));

/**
 * Turns aggregated counts into verdicts. Regression: one-sided Fisher (PR fails more often) with
 * Benjamini–Hochberg over the tests that can reach significance, plus the guards — or, when every
 * record names its cluster, the cluster test with moderated dispersion in Fisher's place; see
 * docs/analysis.md for every class and the conclusion rule.
 */
export function judgeTests({
  run,
  history,
  settings = DEFAULT_ANALYSIS_SETTINGS,
}: {
  run: AggregatedRun;
  /** Pooled history per test name; compared against instead of (or besides) a baseline arm. */
  history?: ReadonlyMap<string, HistoryCounts>;
  settings?: AnalysisSettings;
}): Analysis {
  const hasBaselineArm = run.tests.some((test) => test.baseline);
  const baselineKind: Analysis["baselineKind"] = history
    ? hasBaselineArm
      ? "arm+history"
      : "history"
    : "arm";

  // Thousands of tests share a handful of tables (all passing, one flake …): compute each once.
  const fisherCache = new Map<string, { pValue: number; testable: boolean }>();
  function fisherFor(table: { a: number; b: number; c: number; d: number }) {
    const key = `${table.a},${table.b},${table.c},${table.d}`;
    let result = fisherCache.get(key);
    if (!result) {
      result = { pValue: fisherExactGreater(table), testable: fisherMinimumPValue(table) <= settings.q };
      fisherCache.set(key, result);
    }
    return result;
  }

  const choice = chooseRule({ run, baselineKind });
  const clusterRule = choice.rule === "cluster" ? choice : null;
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
  // Sizes without empty clusters, as the tests take them; shared when a test ran every iteration.
  const sizeKeys = new WeakMap<readonly number[], string>();
  const sizeKey = (sizes: readonly number[]) => {
    let key = sizeKeys.get(sizes);
    if (key === undefined) sizeKeys.set(sizes, (key = sizes.join(",")));
    return key;
  };
  const sizesOf = (runs: readonly number[]) => (runs.every((n) => n > 0) ? runs : runs.filter((n) => n > 0));
  const moderated = clusterRule ? moderateDispersions(clusterCounts) : null;
  function describeClusters(
    [prClusters, baselineClusters]: readonly [ClusterCounts, ClusterCounts],
    dispersion: TestDispersion,
  ): TestClusters {
    const named = (counts: ClusterCounts, names: readonly string[]) =>
      counts.runs
        .map((runs, index) => ({ cluster: names[index]!, runs, failed: counts.failed[index]! }))
        .filter((count) => count.runs > 0);
    const perCluster = {
      pr: named(prClusters, clusterRule!.clusters.pr.names),
      baseline: named(baselineClusters, clusterRule!.clusters.baseline.names),
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
  const clusterTestCache = new Map<string, { pValue: number; testable: boolean }>();
  function clusterTestFor(
    prSizes: readonly number[],
    baselineSizes: readonly number[],
    a: number,
    c: number,
    rho: number,
  ) {
    const key = `${sizeKey(prSizes)}|${sizeKey(baselineSizes)}|${a}|${c}|${rho}`;
    let result = clusterTestCache.get(key);
    if (!result) {
      const { pValue, minimum } = clusterExactTest({
        prSizes,
        baselineSizes,
        prFailed: a,
        baselineFailed: c,
        rho,
      });
      result = { pValue, testable: minimum <= settings.q };
      clusterTestCache.set(key, result);
    }
    return result;
  }

  const candidates: Candidate[] = run.tests.map((test, testIndex) => {
    const pr = countsOf(test.pr);
    const testHistory = history ? historyOf(history, test) : undefined;
    const baseline = hasBaselineArm
      ? countsOf(test.baseline)
      : testHistory
        ? historyAsCounts(testHistory)
        : EMPTY;
    if (pr.runs === 0 || baseline.runs === 0) {
      return {
        test,
        pr,
        baseline,
        ...(testHistory ? { history: testHistory } : {}),
        pValue: null,
        testable: false,
      };
    }
    const table = {
      a: failedIterations(pr),
      b: pr.runs - failedIterations(pr),
      c: failedIterations(baseline),
      d: baseline.runs - failedIterations(baseline),
    };
    const comparison: Comparison = {
      prRuns: pr.runs,
      baselineRuns: baseline.runs,
      baselineFailed: table.c,
      ...(testHistory ? { history: testHistory } : {}),
    };
    const arms = clusterCounts[testIndex];
    const dispersion: TestDispersion | null | undefined = moderated?.dispersions[testIndex];
    if (!clusterRule || !arms || !dispersion) {
      return {
        test,
        pr,
        baseline,
        ...(testHistory ? { history: testHistory } : {}),
        comparison,
        ...fisherFor(table),
      };
    }
    const [prClusters, baselineClusters] = arms;
    const prSizes = sizesOf(prClusters.runs);
    const baselineSizes = sizesOf(baselineClusters.runs);
    // Per-cluster detail only for tests that failed somewhere: tens of thousands of clean tests carry none.
    const clusters = table.a + table.c > 0 ? describeClusters(arms, dispersion) : undefined;
    const base = {
      test,
      pr,
      baseline,
      ...(testHistory ? { history: testHistory } : {}),
      ...(clusters ? { clusters } : {}),
    };
    if (clusterRule.onePerArm) return { ...base, pValue: null, testable: false };
    return {
      ...base,
      comparison: { ...comparison, clusters: { prSizes, baselineSizes, rho: dispersion.rho } },
      ...clusterTestFor(prSizes, baselineSizes, table.a, table.c, dispersion.rho),
    };
  });

  const family = candidates.filter((candidate) => candidate.testable);
  const qValues = benjaminiHochberg(family.map((candidate) => candidate.pValue!));
  const qByCandidate = new Map(family.map((candidate, index) => [candidate, qValues[index]!]));

  const detectableCache = new Map<string, number | null>();
  function detectable(candidate: Candidate): number | null {
    const comparison = candidate.comparison!;
    // The level a lone discovery would need: if this test were the only one flagged, BH rejects it at q/m.
    const alpha = settings.q / (family.length + (candidate.testable ? 0 : 1));
    const historyKey = comparison.history ? `${comparison.history.runs}/${comparison.history.passes}` : "-";
    // What a PR failure rate to detect would face is the dispersion the trend gives at that rate,
    // not this test's own (a clean test has none): one function per run, so the cache keys stay few.
    const clusters = comparison.clusters && {
      ...comparison.clusters,
      rhoAtRate: (rate: number) =>
        roundedRho(moderated!.rhoAtRate(rate, meanClusterSize(comparison.clusters!))),
    };
    const clusterKey = clusters ? `${sizeKey(clusters.prSizes)}|${sizeKey(clusters.baselineSizes)}` : "-";
    const key = `${comparison.prRuns}:${comparison.baselineRuns}:${comparison.baselineFailed}:${historyKey}:${clusterKey}:${alpha}`;
    let minimum = detectableCache.get(key);
    if (minimum === undefined) {
      const critical = criticalFailureCount({
        alpha,
        comparison: { ...comparison, ...(clusters ? { clusters } : {}) },
        settings,
      });
      minimum =
        critical === null
          ? null
          : minimumDetectableFailureRate({
              runs: comparison.prRuns,
              criticalFailures: critical,
              power: settings.power,
              ...(clusters ? { clusters: { sizes: clusters.prSizes, rho: clusters.rhoAtRate } } : {}),
            });
      detectableCache.set(key, minimum);
    }
    return minimum;
  }

  const tests = candidates.map((candidate): TestVerdict => {
    const { test, pr, baseline } = candidate;
    const qValue = qByCandidate.get(candidate) ?? null;
    const prFailed = failedIterations(pr);
    const baselineFailed = failedIterations(baseline);
    const historyRule =
      candidate.history && candidate.history.runs > 0 && pr.runs > 0
        ? applyHistoryRule({
            attempts: pr.runs,
            passes: pr.runs - prFailed,
            historicalPassRate: candidate.history.passes / candidate.history.runs,
          })
        : undefined;
    const base = {
      name: test.name,
      component: test.component,
      lifecycle: test.lifecycle,
      ...(test.baselineName ? { baselineName: test.baselineName } : {}),
      ...(test.labels ? { labels: test.labels } : {}),
      ...(test.tags ? { tags: test.tags } : {}),
      pr,
      baseline,
      pValue: candidate.pValue,
      qValue,
      ...(historyRule ? { historyRule } : {}),
      ...(candidate.clusters ? { clusters: candidate.clusters } : {}),
      ...(test.pr ? { prAggregate: test.pr } : {}),
      ...(test.baseline ? { baselineAggregate: test.baseline } : {}),
    };
    const verdict = (
      cls: VerdictClass,
      reason: string,
      minDetectableFailureRate: number | null = null,
    ): TestVerdict => ({
      ...base,
      class: cls,
      reason,
      minDetectableFailureRate,
    });

    const inBaseline = hasBaselineArm ? test.baseline !== undefined : candidate.history !== undefined;
    if (!inBaseline) {
      return verdict("new-test", `new in the PR: ${describeCounts(pr)}; nothing to compare with`);
    }
    if (!test.pr) {
      return verdict("removed", `not run by the PR arm; the baseline ran it ${baseline.runs} times`);
    }
    const vs = `PR ${describeCounts(pr)}, baseline ${describeCounts(baseline)}`;
    const significance = candidate.pValue === null ? "" : `; p=${formatP(candidate.pValue)}`;
    if (
      qValue !== null &&
      qValue <= settings.q &&
      passesGuards({ prFailed, comparison: candidate.comparison!, settings })
    ) {
      return verdict("regression", `${vs}${significance}, q=${formatP(qValue)}`);
    }
    if (clusterRule?.onePerArm && !(prFailed === 0 && baselineFailed === 0)) {
      if (prFailed === pr.runs && baselineFailed === baseline.runs)
        return verdict("consistent-failure", `${vs}: fails in both arms alike`);
      return verdict("inconclusive", `${vs}: ${ONE_CLUSTER_PER_ARM}`);
    }
    if (clusterRule?.onePerArm)
      return verdict("stable", `${vs}; ${ONE_CLUSTER_PER_ARM}, so no detectable rate is stated`);
    if (pr.runs < settings.minimumRuns || baseline.runs < settings.minimumRuns) {
      return verdict(
        "inconclusive",
        `${vs}: too few runs to judge (need ${settings.minimumRuns} in each arm)`,
        pr.runs > 0 && baseline.runs > 0 ? detectable(candidate) : null,
      );
    }
    if (prFailed === pr.runs && baselineFailed === baseline.runs) {
      return verdict("consistent-failure", `${vs}: fails in both arms alike`, detectable(candidate));
    }
    const minimum = detectable(candidate);
    const bound =
      minimum === null
        ? "no failure rate could have been told apart from the baseline at these run counts"
        : `would have caught a failure rate of ${percent(minimum)} or more (${percent(settings.power)} power)`;
    if (prFailed === 0 && baselineFailed > 0) {
      // Good news needs no family-wide correction: it cannot fail a run.
      const clusters = candidate.comparison?.clusters;
      const improvement = clusters
        ? clusterTestFor(clusters.baselineSizes, clusters.prSizes, baselineFailed, 0, clusters.rho).pValue
        : fisherExactGreater({
            a: baselineFailed,
            b: baseline.runs - baselineFailed,
            c: 0,
            d: pr.runs,
          });
      if (improvement <= settings.q) {
        return verdict(
          "fixed",
          `${vs}: fails significantly less than the baseline (p=${formatP(improvement)})`,
          minimum,
        );
      }
    }
    if (minimum === null) return verdict("inconclusive", `${vs}${significance}: ${bound}`);
    if (prFailed > 0 && baselineFailed === 0) {
      return verdict(
        "new-flake",
        `${vs}${significance}: fails only in the PR, not significantly; ${bound}`,
        minimum,
      );
    }
    if (prFailed > 0)
      return verdict("known-flake", `${vs}${significance}: flaky in the baseline too; ${bound}`, minimum);
    if (baselineFailed > 0)
      return verdict("known-flake", `${vs}: flaky in the baseline, clean in the PR; ${bound}`, minimum);
    return verdict("stable", `${vs}; ${bound}`, minimum);
  });

  const counts = Object.fromEntries(VERDICT_CLASSES.map((cls) => [cls, 0])) as Record<VerdictClass, number>;
  for (const test of tests) counts[test.class]++;
  const { conclusion, reason } = decideConclusion({ tests, prIterations: run.iterations.pr });
  return {
    conclusion,
    conclusionReason: reason,
    arch: run.arches.length === 1 ? run.arches[0]! : null,
    iterations: run.iterations,
    baselineKind,
    rule: choice.rule,
    ruleNote: choice.note,
    ...(clusterRule
      ? {
          clusters: measureClusterWeather({
            layout: clusterRule.clusters,
            tests: candidates.flatMap((candidate, index) =>
              candidate.clusters
                ? [{ arms: clusterCounts[index]!, dispersion: candidate.clusters.dispersion }]
                : [],
            ),
            prior: moderated!.prior,
            onePerArm: clusterRule.onePerArm,
          }),
        }
      : {}),
    familySize: family.length,
    settings,
    tests,
    counts,
  };
}

/**
 * failure: a blocking test regressed, or a new blocking test failed outright. neutral: nothing ran,
 * or nothing regressed but a blocking test failed without enough evidence either way (new-flake,
 * inconclusive, a new test that only flaked). success otherwise. Informing tests never change the
 * conclusion.
 */
export function decideConclusion({
  tests,
  prIterations,
}: {
  tests: readonly TestVerdict[];
  prIterations: number;
}): { conclusion: AnalysisConclusion; reason: string } {
  const failing = tests.filter(failsTheRun);
  const regressions = failing.filter((test) => test.class === "regression").length;
  const failedNew = failing.length - regressions;
  if (failing.length > 0) {
    const parts = [
      ...(regressions > 0
        ? [`${regressions} blocking test(s) fail significantly more often than the baseline`]
        : []),
      ...(failedNew > 0 ? [`${failedNew} new blocking test(s) failed`] : []),
    ];
    return { conclusion: "failure", reason: parts.join("; ") };
  }
  if (prIterations === 0) return { conclusion: "neutral", reason: "the PR arm produced no results" };
  const unclear = tests.filter(
    (test) =>
      isFlakyNewTest(test) ||
      (test.lifecycle === "blocking" &&
        (test.class === "new-flake" || test.class === "inconclusive") &&
        failedIterations(test.pr) > 0),
  );
  if (unclear.length > 0) {
    return {
      conclusion: "neutral",
      reason: `no regression, but ${unclear.length} blocking test(s) failed without enough evidence either way`,
    };
  }
  return { conclusion: "success", reason: "no blocking test got worse" };
}
