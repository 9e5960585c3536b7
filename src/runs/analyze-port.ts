import type { AnalysisConclusion } from "../analysis/types.ts";
import type { AdaptiveSummary } from "../report/adaptive-test-rows.ts";
import type { CheckRunOutput } from "../report/check-run-output.ts";
import type { RunRecord } from "./run-record.ts";

/** What analyzing a finished run yields: its conclusion, what its reader sees, and for a gate its verdict. */
export interface RunAnalysis {
  conclusion: AnalysisConclusion;
  output: CheckRunOutput;
  /** The HTML report the run's page serves. */
  reportPath: string;
  decision?: RunRecord["decision"];
  pool?: RunRecord["pool"];
}

/** The analysis port: every result set of one run → conclusion and reports in outDir. */
export type AnalyzeRunResults = (input: {
  run: RunRecord;
  resultsPaths: string[];
  outDir: string;
  /** Lines every report shows, e.g. iterations the infrastructure lost. */
  notes?: string[];
  /** An adaptive run's decisions: the report shows why each test stopped. */
  adaptive?: AdaptiveSummary;
  /** The link of a build-farm artifact file (its absolute path) in the report; by default relative to it. */
  artifactHref?: (file: string) => string;
}) => Promise<RunAnalysis>;
