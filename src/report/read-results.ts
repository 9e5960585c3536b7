import { parseResultLine } from "../analysis/parse-result-line.ts";
import type { InputRole, ResultsAggregator } from "../analysis/results-aggregator.ts";
import { MAX_ITERATION } from "../analysis/results-aggregator.ts";
import { AnalysisInputError } from "./analysis-input-error.ts";
import { readJsonlBatches, type ReadJsonlOptions } from "./read-jsonl-lines.ts";

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
}

export function emptyInputReport(): InputReport {
  return { files: [], lines: 0, malformed: 0, malformedExamples: [], shrunk: 0 };
}

const EXAMPLES = 10;

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
  for (const file of files) {
    report.files.push(file);
    const malformed = (line: number, reason: string) => {
      report.malformed++;
      if (report.malformedExamples.length < EXAMPLES) report.malformedExamples.push({ file, line, reason });
    };
    try {
      for await (const batch of readJsonlBatches(file, readOptions))
        for (const item of batch) {
          report.lines++;
          if ("tooLong" in item) {
            malformed(item.number, "line too long even with its long strings cut");
            continue;
          }
          const parsed = parseResultLine(item.text);
          if (!parsed.ok) {
            malformed(item.number, parsed.reason);
            continue;
          }
          if (parsed.record.iteration > MAX_ITERATION) {
            malformed(item.number, `iteration ${parsed.record.iteration} is beyond ${MAX_ITERATION}`);
            continue;
          }
          if (item.shrunk) report.shrunk++;
          aggregator.add(parsed.record, role);
        }
    } catch (error) {
      throw new AnalysisInputError(`cannot read ${file}: ${(error as Error).message}`, { cause: error });
    }
  }
}
