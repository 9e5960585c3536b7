import { failedIterations } from "./failed-iterations.ts";
import { failsTheRun, isFlakyNewTest } from "./fails-the-run.ts";
import type { AnalysisConclusion, TestVerdict } from "./types.ts";

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
