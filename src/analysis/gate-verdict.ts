import { failedIterations } from "./failed-iterations.ts";
import { formatPercent } from "./format-statistics.ts";
import type { Analysis, TestVerdict } from "./types.ts";

/** What a release gate says of a candidate payload on one arch. */
export const GATE_VERDICTS = ["Accepted", "Rejected", "Inconclusive"] as const;
export type GateVerdict = (typeof GATE_VERDICTS)[number];

const LISTED = 10;

const describe = (tests: readonly TestVerdict[]) =>
  tests
    .slice(0, LISTED)
    .map((test) => `${test.name}: ${test.reason}`)
    .concat(tests.length > LISTED ? [`… and ${tests.length - LISTED} more`] : []);

/**
 * A gate's verdict for one arch from the analysis of its run. Rejected: a blocking test regressed or
 * a new blocking test failed (the analysis concluded failure). Accepted: nothing got worse and the
 * run was large enough to say so for every blocking test. Everything else — a failure without
 * enough evidence either way, too few runs — is Inconclusive, never Accepted.
 */
export function gateVerdict(analysis: Analysis): { verdict: GateVerdict; reasons: string[] } {
  const blocking = analysis.tests.filter((test) => test.lifecycle === "blocking");
  if (analysis.conclusion === "failure") {
    const culprits = blocking.filter(
      (test) => test.class === "regression" || (test.class === "new-test" && failedIterations(test.pr) > 0),
    );
    return { verdict: "Rejected", reasons: [analysis.conclusionReason, ...describe(culprits)] };
  }
  if (analysis.conclusion === "neutral") {
    const unclear = blocking.filter(
      (test) =>
        failedIterations(test.pr) > 0 && (test.class === "new-flake" || test.class === "inconclusive"),
    );
    return { verdict: "Inconclusive", reasons: [analysis.conclusionReason, ...describe(unclear)] };
  }
  const { minimumRuns } = analysis.settings;
  if (analysis.iterations.pr < minimumRuns) {
    return {
      verdict: "Inconclusive",
      reasons: [
        `only ${analysis.iterations.pr} iteration(s) ran; at least ${minimumRuns} are needed before anything can be accepted`,
      ],
    };
  }
  const undecided = blocking.filter((test) => test.class === "inconclusive");
  if (undecided.length > 0) {
    return {
      verdict: "Inconclusive",
      reasons: [
        `${undecided.length} blocking test(s) could not be judged at these run counts`,
        ...describe(undecided),
      ],
    };
  }
  const detectable = blocking
    .map((test) => test.minDetectableFailureRate)
    .filter((rate): rate is number => rate !== null);
  const bound =
    detectable.length > 0
      ? `; a blocking test failing ${formatPercent(Math.max(...detectable))} of the time or more would have been caught`
      : "";
  return {
    verdict: "Accepted",
    reasons: [
      `${analysis.conclusionReason}: ${blocking.length} blocking test(s) over ${analysis.iterations.pr} iterations${bound}`,
    ],
  };
}
