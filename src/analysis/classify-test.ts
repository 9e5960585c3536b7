import { ONE_CLUSTER_PER_ARM } from "./cluster-rule.ts";
import { failedIterations } from "./failed-iterations.ts";
import { passesGuards } from "./flag-rule.ts";
import { formatPercent as percent, formatPValue as formatP } from "./format-statistics.ts";
import { applyHistoryRule } from "./history-rule.ts";
import type { Candidate } from "./judge-candidates.ts";
import type { FamilyJudgement } from "./judge-family.ts";
import type { AnalysisSettings, ArmCounts, TestVerdict, VerdictClass } from "./types.ts";

function describeCounts(counts: ArmCounts): string {
  const flaked = counts.flakes > 0 ? ` (${counts.flakes} flaked)` : "";
  return `${failedIterations(counts)}/${counts.runs} failed${flaked}`;
}

/**
 * One test's verdict class and the sentence that says why, from its candidate and what the
 * family said of it; docs/analysis.md lists the classes in this order of precedence.
 */
export function classifyTest({
  candidate,
  judgement: { qValue, minDetectableFailureRate: minimum },
  hasBaselineArm,
  onePerArm,
  settings,
}: {
  candidate: Candidate;
  judgement: FamilyJudgement;
  hasBaselineArm: boolean;
  /** The cluster rule with one cluster per arm: no rate difference can be told from the cluster. */
  onePerArm: boolean;
  settings: AnalysisSettings;
}): TestVerdict {
  const { test, pr, baseline } = candidate;
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
  if (onePerArm && !(prFailed === 0 && baselineFailed === 0)) {
    if (prFailed === pr.runs && baselineFailed === baseline.runs)
      return verdict("consistent-failure", `${vs}: fails in both arms alike`);
    return verdict("inconclusive", `${vs}: ${ONE_CLUSTER_PER_ARM}`);
  }
  if (onePerArm) return verdict("stable", `${vs}; ${ONE_CLUSTER_PER_ARM}, so no detectable rate is stated`);
  if (pr.runs < settings.minimumRuns || baseline.runs < settings.minimumRuns) {
    return verdict(
      "inconclusive",
      `${vs}: too few runs to judge (need ${settings.minimumRuns} in each arm)`,
      minimum,
    );
  }
  if (prFailed === pr.runs && baselineFailed === baseline.runs) {
    return verdict("consistent-failure", `${vs}: fails in both arms alike`, minimum);
  }
  const bound =
    minimum === null
      ? "no failure rate could have been told apart from the baseline at these run counts"
      : `would have caught a failure rate of ${percent(minimum)} or more (${percent(settings.power)} power)`;
  // Good news needs no family-wide correction: it cannot fail a run.
  const improvement = candidate.improvementPValue;
  if (improvement !== undefined && improvement <= settings.q) {
    return verdict(
      "fixed",
      `${vs}: fails significantly less than the baseline (p=${formatP(improvement)})`,
      minimum,
    );
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
}
