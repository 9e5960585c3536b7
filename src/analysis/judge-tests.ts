import { chooseRule } from "./cluster-rule.ts";
import { measureClusterWeather } from "./cluster-weather.ts";
import { classifyTest } from "./classify-test.ts";
import { decideConclusion } from "./decide-conclusion.ts";
import { createJudgeCache } from "./judge-cache.ts";
import { judgeCandidates } from "./judge-candidates.ts";
import { judgeFamily } from "./judge-family.ts";
import {
  DEFAULT_ANALYSIS_SETTINGS,
  VERDICT_CLASSES,
  type AggregatedRun,
  type Analysis,
  type AnalysisSettings,
  type HistoryCounts,
  type VerdictClass,
} from "./types.ts";

/**
 * Turns aggregated counts into verdicts, in three steps: candidates (each test's counts and
 * one-sided tests), family (Benjamini–Hochberg over the tests that can reach significance, and the
 * rate each could detect), classify (the class ladder with the guards). Regression is one-sided
 * Fisher (PR fails more often) — or, when every record names its cluster, the cluster test with
 * moderated dispersion in Fisher's place; see docs/analysis.md for every class and the conclusion rule.
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
  const choice = chooseRule({ run, baselineKind });
  const clusterRule = choice.rule === "cluster" ? choice : null;
  const cache = createJudgeCache();

  const { candidates, moderated } = judgeCandidates({
    run,
    history,
    hasBaselineArm,
    rule: choice,
    settings,
    cache,
  });
  const family = judgeFamily({ candidates, rhoAtRate: moderated?.rhoAtRate, settings, cache });
  const tests = candidates.map((candidate, index) =>
    classifyTest({
      candidate,
      judgement: family.judgements[index]!,
      hasBaselineArm,
      onePerArm: clusterRule?.onePerArm ?? false,
      settings,
    }),
  );

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
            tests: candidates.flatMap((candidate) =>
              candidate.clusters && candidate.clusterArms
                ? [{ arms: candidate.clusterArms, dispersion: candidate.clusters.dispersion }]
                : [],
            ),
            prior: moderated!.prior,
            onePerArm: clusterRule.onePerArm,
          }),
        }
      : {}),
    familySize: family.size,
    settings,
    tests,
    counts,
  };
}
