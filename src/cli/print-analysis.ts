import type { AnalyzeRunResult } from "../report/analyze-run.ts";

/** The analysis verdict and where its reports are, as `analyze`, `run` and `demo` print it. */
export function printAnalysis(result: AnalyzeRunResult, out: NodeJS.WritableStream = process.stdout): void {
  out.write(
    `${result.conclusion}: ${result.title}\n${result.analysis.conclusionReason}\n` +
      `report:    ${result.paths.html}\nsummary:   ${result.paths.summaryJson}\n` +
      `junit:     ${result.paths.junit}\ncheck run: ${result.paths.checkRun}\n`,
  );
}
