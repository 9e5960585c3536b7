import { failedIterations } from "../analysis/failed-iterations.ts";
import { failsTheRun } from "../analysis/fails-the-run.ts";
import type { TestVerdict } from "../analysis/types.ts";

/** A test that failed the run, with where its spec is written: what a check-run annotation says. */
export interface LocatedFailure {
  test: string;
  /** The spec's code locations as the test binary listed them (`<file>:<line>`), outermost first. */
  codeLocations: string[];
  message: string;
}

/** Enough to annotate every failure a reader can act on, bounded so a run record stays small. */
const MAX_LOCATED_FAILURES = 500;

/**
 * The regressed and newly failing blocking tests whose specs have code locations, each with its
 * failure counts and its first failure's message (pure).
 */
export function locatedFailures(
  tests: readonly TestVerdict[],
  codeLocations: ReadonlyMap<string, readonly string[]>,
): LocatedFailure[] {
  const found: LocatedFailure[] = [];
  for (const test of tests) {
    const locations = codeLocations.get(test.name);
    if (!failsTheRun(test) || !locations?.length) continue;
    const pr = `failed ${failedIterations(test.pr)} of ${test.pr.runs} PR iterations`;
    const counts =
      test.class === "regression"
        ? `Regressed: ${pr}, the baseline ${failedIterations(test.baseline)} of ${test.baseline.runs}.`
        : `New test: ${pr}.`;
    const first = test.prAggregate?.firstFailure;
    found.push({
      test: test.name,
      codeLocations: [...locations],
      message: first
        ? `${counts}\n\nFirst failure (iteration ${first.iteration}):\n${first.message}`
        : counts,
    });
    if (found.length === MAX_LOCATED_FAILURES) break;
  }
  return found;
}
