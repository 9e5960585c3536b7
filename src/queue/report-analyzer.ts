import { analyzeRun } from "../report/analyze-run.ts";
import type { AnalyzeRunResults } from "./process-execute.ts";

/** The report module's analyzeRun (statistics, check-run output, HTML report) as the analysis port. */
export const analyzeWithReports: AnalyzeRunResults = async ({ resultsPaths, outDir, notes }) => {
  const result = await analyzeRun({ pr: resultsPaths, outDir, notes });
  return { conclusion: result.conclusion, output: result.checkRun, reportPath: result.paths.html };
};
