import { failedIterations } from "../analysis/failed-iterations.ts";
import type { TestVerdict, VerdictClass } from "../analysis/types.ts";

/** What a PR author must look at first: what fails the run, then what may, then the rest. */
const CLASS_RANK: Record<VerdictClass, number> = {
  regression: 0,
  "new-test": 1,
  "new-flake": 2,
  inconclusive: 3,
  "consistent-failure": 4,
  "known-flake": 5,
  fixed: 6,
  removed: 7,
  stable: 8,
};

function rank(test: TestVerdict): number {
  let value = CLASS_RANK[test.class] * 4;
  // Within a class: blocking before informing, and tests that failed before tests that did not.
  if (test.lifecycle !== "blocking") value += 2;
  if (failedIterations(test.pr) === 0) value += 1;
  return value;
}

/** Sorted copy, most important first; ties by p-value, then by PR failures, then by name. */
export function sortByImportance(tests: readonly TestVerdict[]): TestVerdict[] {
  // Keys computed once per test, not once per comparison: reports sort tens of thousands of tests.
  const keyed = tests.map((test) => ({
    test,
    rank: rank(test),
    p: test.pValue ?? 1,
    failed: failedIterations(test.pr),
  }));
  keyed.sort(
    (x, y) =>
      x.rank - y.rank ||
      x.p - y.p ||
      y.failed - x.failed ||
      (x.test.name < y.test.name ? -1 : x.test.name > y.test.name ? 1 : 0),
  );
  return keyed.map(({ test }) => test);
}

export const CLASS_LABEL: Record<VerdictClass, { one: string; many: string }> = {
  regression: { one: "regression", many: "regressions" },
  "new-flake": { one: "new flake", many: "new flakes" },
  "known-flake": { one: "known flake", many: "known flakes" },
  fixed: { one: "fixed", many: "fixed" },
  "consistent-failure": { one: "consistent failure", many: "consistent failures" },
  stable: { one: "stable", many: "stable" },
  inconclusive: { one: "inconclusive", many: "inconclusive" },
  "new-test": { one: "new test", many: "new tests" },
  removed: { one: "removed", many: "removed" },
};

export function countLabel(cls: VerdictClass, count: number): string {
  return `${count} ${count === 1 ? CLASS_LABEL[cls].one : CLASS_LABEL[cls].many}`;
}
