import { parseResultLine } from "../analysis/parse-result-line.ts";
import type { InputRole, ResultsAggregator } from "../analysis/results-aggregator.ts";
import { MAX_ITERATION } from "../analysis/results-aggregator.ts";
import { AnalysisInputError } from "./analysis-input-error.ts";
import { forEachJsonlLine, type JsonlItem, type ReadJsonlOptions } from "./read-jsonl-lines.ts";

export interface MalformedLine {
  file: string;
  line: number;
  reason: string;
}

export interface InputReport {
  files: string[];
  lines: number;
  malformed: number;
  /** The first few malformed lines, to show where to look. */
  malformedExamples: MalformedLine[];
  /** Records whose long string fields were cut to be read. */
  shrunk: number;
  /** `details[]` the binaries reported, a few per test and arm (see DETAILS_PER_TEST). */
  details: ReportedDetails[];
}

/** One execution's `details[]`, as JSON cut to DETAILS_MAX_CHARS. */
export interface ReportedDetails {
  name: string;
  component: string;
  arm: string;
  iteration: number;
  attempt: number;
  result: string;
  details: string;
}

export function emptyInputReport(): InputReport {
  return { files: [], lines: 0, malformed: 0, malformedExamples: [], shrunk: 0, details: [] };
}

const MALFORMED_EXAMPLES = 10;
const DETAILS_PER_TEST = 3;
const DETAILS_TOTAL = 300;
const DETAILS_MAX_CHARS = 2_000;

/** Streams results.jsonl files into the aggregator; bad lines are counted in `report`, never fatal. */
export async function readResults({
  files,
  role,
  aggregator,
  report,
  readOptions,
}: {
  files: readonly string[];
  role: InputRole;
  aggregator: ResultsAggregator;
  report: InputReport;
  readOptions?: ReadJsonlOptions;
}): Promise<void> {
  const detailsSeen = new Map<string, number>();
  for (const file of files) {
    report.files.push(file);
    const malformed = (line: number, reason: string) => {
      report.malformed++;
      if (report.malformedExamples.length < MALFORMED_EXAMPLES)
        report.malformedExamples.push({ file, line, reason });
    };
    const onLine = (item: JsonlItem) => {
      report.lines++;
      if ("tooLong" in item) {
        malformed(item.number, "line too long even with its long strings cut");
        return;
      }
      const parsed = parseResultLine(item.text);
      if (!parsed.ok) {
        malformed(item.number, parsed.reason);
        return;
      }
      if (parsed.record.iteration > MAX_ITERATION) {
        malformed(item.number, `iteration ${parsed.record.iteration} is beyond ${MAX_ITERATION}`);
        return;
      }
      if (item.shrunk) report.shrunk++;
      const record = parsed.record;
      if (record.details !== undefined && report.details.length < DETAILS_TOTAL) {
        const key = `${record.arm}\u0000${record.component}\u0000${record.name}`;
        const seen = detailsSeen.get(key) ?? 0;
        if (seen < DETAILS_PER_TEST) {
          detailsSeen.set(key, seen + 1);
          const json = JSON.stringify(record.details);
          report.details.push({
            name: record.name,
            component: record.component,
            arm: record.arm,
            iteration: record.iteration,
            attempt: record.attempt,
            result: record.result,
            details: json.length > DETAILS_MAX_CHARS ? `${json.slice(0, DETAILS_MAX_CHARS)}…` : json,
          });
        }
      }
      aggregator.add(record, role);
    };
    try {
      await forEachJsonlLine(file, onLine, readOptions);
    } catch (error) {
      throw new AnalysisInputError(`cannot read ${file}: ${(error as Error).message}`, { cause: error });
    }
  }
}
