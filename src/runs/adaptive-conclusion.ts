import { adaptiveMarkdown } from "../report/adaptive-markdown.ts";
import type { RunAnalysis } from "./analyze-port.ts";
import { adaptiveSummary } from "./adaptive-summary.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * An adaptive run concludes from its decision step, whose error rate holds however many batches
 * ran (the analysis of every execution below it does not, under optional stopping): failure on a
 * blocking regression, success once every test is decided clean, neutral when the budget ran out
 * first. The check run leads with what was decided and what it cost.
 */
export function adaptiveConclusion(run: RunRecord, analysis: RunAnalysis, now = new Date()): RunAnalysis {
  const summary = adaptiveSummary(run, now);
  if (!summary) return analysis;
  const regressions = summary.tests.filter((t) => t.decision === "regression" && !t.informing);
  const undecided = summary.tests.filter((t) => t.decision === "undecided").length;
  const cost = `${summary.spent} executions${summary.clusterHours !== undefined ? `, ${summary.clusterHours.toFixed(1)} cluster-hours` : ""}`;
  const [conclusion, title]: [RunAnalysis["conclusion"], string] =
    regressions.length > 0
      ? [
          "failure",
          `Regression in ${regressions.length} test(s) — decided in ${summary.batches} batch(es), ${cost}`,
        ]
      : undecided === 0
        ? ["success", `No regression — every test decided in ${summary.batches} batch(es), ${cost}`]
        : ["neutral", `Undecided — ${undecided} test(s) when the budget was spent, ${cost}`];
  return {
    ...analysis,
    conclusion,
    output: {
      ...analysis.output,
      title: title.length > 100 ? `${title.slice(0, 99)}…` : title,
      summary: [
        adaptiveMarkdown(summary),
        "The conclusion is the decision step's; what follows is every execution analyzed as one run, for detail.",
        analysis.output.summary,
      ].join("\n\n"),
    },
  };
}
