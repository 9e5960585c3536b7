import type { AdaptiveSummary } from "./adaptive-test-rows.ts";
import type { Analysis } from "../analysis/types.ts";
import { clusterNotes } from "./cluster-notes.ts";
import type { ReportArtifacts } from "./read-iteration-artifacts.ts";
import type { ManifestRead } from "./read-run-manifest.ts";
import type { InputReport } from "./read-results.ts";

/** Everything a report shows: the verdicts and what they were computed from. */
export interface ReportContext {
  analysis: Analysis;
  input: InputReport & { records: number; duplicates: number };
  plan: ManifestRead;
  /** Where run.json's directory is, relative to the report: artifact links start there. */
  runDir?: string;
  /** What build-farm pods' binaries wrote, per iteration, as the collector kept it. */
  artifacts?: readonly ReportArtifacts[];
  /** The pooled history baseline: `source` says where it came from (a file's path, a stream's pool). */
  history?: { source: string; tests: number; runs?: number; from?: string; to?: string; stream?: string };
  /** Said by whoever ran the iterations (the executor), shown before the input's own notes. */
  notes?: readonly string[];
  /** An adaptive run's decisions, shown first. */
  adaptive?: AdaptiveSummary;
  generatedAt: string;
}

/** Problems with the input, and what the clusters did, worth a line in every report. */
export function inputNotes({ analysis, input, history, notes: given }: ReportContext): string[] {
  const notes: string[] = [...(given ?? []), ...clusterNotes(analysis)];
  if (input.malformed > 0) {
    const first = input.malformedExamples[0];
    notes.push(
      `${input.malformed} malformed line(s) skipped` +
        (first ? ` (first: ${first.file}:${first.line}: ${first.reason})` : ""),
    );
  }
  if (input.duplicates > 0)
    notes.push(`${input.duplicates} duplicate record(s) ignored (same test, arm, iteration and attempt)`);
  if (input.shrunk > 0) notes.push(`${input.shrunk} record(s) had very long fields cut to be read`);
  if (history) {
    const window = history.from || history.to ? ` from ${history.from ?? "?"} to ${history.to ?? "?"}` : "";
    const pool = history.runs === undefined ? "" : `, pooled from ${history.runs} run(s)${window}`;
    notes.push(`history baseline ${history.source}: ${history.tests} test(s)${pool}`);
  }
  return notes;
}
