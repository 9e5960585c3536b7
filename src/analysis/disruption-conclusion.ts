import type { DisruptionAnalysis } from "./disruption-types.ts";
import type { Analysis } from "./types.ts";

/**
 * The analysis with its disruption comparison, and the conclusion it changes (pure): a blocking
 * test's path disrupted significantly longer in the PR fails the run, as a blocking regression does.
 * Informing (and quarantined) tests' rows are shown and never change it.
 */
export function withDisruption({
  analysis,
  disruption,
}: {
  analysis: Analysis;
  disruption: DisruptionAnalysis | undefined;
}): Analysis {
  if (!disruption) return analysis;
  const quarantined = new Set(analysis.tests.filter((test) => test.quarantine).map((test) => test.name));
  const regressed = disruption.rows.filter(
    (row) => row.verdict === "regression" && row.lifecycle === "blocking" && !quarantined.has(row.test),
  );
  if (regressed.length === 0) return { ...analysis, disruption };
  const tests = new Set(regressed.map((row) => row.test)).size;
  const reason = `${regressed.length} path(s) of ${tests} blocking test(s) disrupted significantly longer than the baseline`;
  return {
    ...analysis,
    disruption,
    conclusion: "failure",
    conclusionReason: analysis.conclusion === "failure" ? `${analysis.conclusionReason}; ${reason}` : reason,
  };
}
