import { readFile } from "node:fs/promises";
import { historyBaselineSchema, type HistoryBaseline } from "../analysis/history-baseline-schema.ts";
import type { HistoryCounts } from "../analysis/types.ts";
import { AnalysisInputError } from "./analysis-input-error.ts";
import { historyByTest } from "./history-by-test.ts";

/** Reads and validates a history baseline file; a bad file is an input error (exit 2), not a guess. */
export async function readHistory(
  path: string,
): Promise<{ baseline: HistoryBaseline; byTest: Map<string, HistoryCounts> }> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new AnalysisInputError(`cannot read history ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const parsed = historyBaselineSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AnalysisInputError(
      `history ${path} is not a history baseline: ${issue ? `${issue.path.join(".")}: ${issue.message}` : "invalid"}`,
      { cause: parsed.error },
    );
  }
  return { baseline: parsed.data, byTest: historyByTest(parsed.data.tests) };
}
