import type { TestVerdict } from "./types.ts";

/**
 * Whether this test alone makes the conclusion `failure`: a blocking regression, or a new blocking
 * test that failed outright in some iteration. A new test that only flaked (failed, then passed on
 * a retry) has no baseline to be judged against; it makes the run neutral instead.
 */
export function failsTheRun(test: TestVerdict): boolean {
  if (test.lifecycle !== "blocking") return false;
  return test.class === "regression" || (test.class === "new-test" && test.pr.failures > 0);
}

/** A new blocking test that flaked but never failed outright: suspicious, not damning. */
export function isFlakyNewTest(test: TestVerdict): boolean {
  return (
    test.lifecycle === "blocking" && test.class === "new-test" && test.pr.failures === 0 && test.pr.flakes > 0
  );
}
