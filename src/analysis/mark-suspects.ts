import type { DecideState } from "./decide-state.ts";

/**
 * A crossover's state with the tests its contrasts through an upgrade now call a regression (their
 * e-value reached `threshold`) marked suspect, numbered on from the suspects before, in name order
 * within one batch: the number sets the threshold its confirmation must reach, and its contrasts so
 * far never count towards that confirmation. A test whose contrasts involve no upgrade (a history
 * payload against new clusters on the PR payload) is not a suspect: its e-value decides it.
 */
export function markSuspects(state: DecideState, threshold: number): DecideState {
  if (state.payloads !== "differ") return state;
  const upgraded = new Set(
    state.clusters.flatMap((cluster, index) =>
      cluster.baseline && cluster.firstPr !== undefined ? [index] : [],
    ),
  );
  const newly = state.tests
    .filter(
      (test) =>
        !test.suspect &&
        test.summary.regression >= threshold &&
        test.contrasts.some((entry) => upgraded.has(entry.cluster)),
    )
    .map((test) => test.name)
    .sort();
  if (newly.length === 0) return state;
  const before = state.tests.filter((test) => test.suspect).length;
  const order = new Map(newly.map((name, index) => [name, before + index + 1]));
  return {
    ...state,
    tests: state.tests.map((test) => {
      const number = order.get(test.name);
      return number === undefined ? test : { ...test, suspect: { order: number, after: state.batches } };
    }),
  };
}
