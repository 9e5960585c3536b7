import { benjaminiHochberg } from "../../src/analysis/benjamini-hochberg.ts";
import { chooseRule } from "../../src/analysis/cluster-rule.ts";
import { failedIterations } from "../../src/analysis/failed-iterations.ts";
import { passesGuards } from "../../src/analysis/flag-rule.ts";
import { createJudgeCache } from "../../src/analysis/judge-cache.ts";
import { judgeCandidates, type Candidate } from "../../src/analysis/judge-candidates.ts";
import { DEFAULT_ANALYSIS_SETTINGS, type AggregatedRun } from "../../src/analysis/types.ts";

/**
 * What `judgeTests` decides about regressions in a run whose tests both arms ran, with no history,
 * and no faster than it needs: its own candidate step (the rule, the dispersion prior fitted across
 * the run, every test's p-value and whether it joins the Tarone family), then Benjamini–Hochberg at
 * q over that family and the guards, which is where its class ladder calls a regression. What
 * `judgeTests` adds after that — every test's minimum detectable rate and the other classes — costs
 * about twice as much and decides no regression; the simulation tests that judge hundreds of runs
 * this way also check, on a few of them, that `judgeTests` calls the very same tests regressions.
 */
export function judgedRegressions(
  run: AggregatedRun,
  settings = DEFAULT_ANALYSIS_SETTINGS,
): { rule: "cluster" | "iteration"; candidates: Candidate[]; familySize: number; regressions: Set<string> } {
  const rule = chooseRule({ run, baselineKind: "arm" });
  const { candidates } = judgeCandidates({
    run,
    history: undefined,
    hasBaselineArm: true,
    rule,
    settings,
    cache: createJudgeCache(),
  });
  const family = candidates.filter((candidate) => candidate.testable);
  const qValues = benjaminiHochberg(family.map((candidate) => candidate.pValue!));
  const regressions = new Set(
    family
      .filter(
        (candidate, index) =>
          qValues[index]! <= settings.q &&
          passesGuards({
            prFailed: failedIterations(candidate.pr),
            comparison: candidate.comparison!,
            settings,
          }),
      )
      .map((candidate) => candidate.test.name),
  );
  return { rule: rule.rule, candidates, familySize: family.length, regressions };
}
