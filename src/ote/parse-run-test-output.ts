import { isCompleteOteResult } from "./is-complete-ote-result.ts";
import { oteResultSchema, type OteResult } from "./schemas.ts";

export interface ParsedRunTestOutput {
  /** First valid result per test name. */
  results: Map<string, OteResult>;
  /** Result lines that named a test but broke the schema, by test name. */
  malformedResults: Map<string, string>;
  /** Lines that looked like JSON but were not valid JSON. */
  malformedLines: number;
  /** Everything that is not a result: log noise, kept as the test's output when it has no result. */
  noise: string[];
}

/**
 * Splits `run-test -o jsonl` output into result records and log noise. A line is a result when it
 * is a JSON object with `name` and `result`; anything else is noise, because binaries log freely.
 */
export function parseRunTestOutput(lines: readonly string[]): ParsedRunTestOutput {
  const results = new Map<string, OteResult>();
  const malformedResults = new Map<string, string>();
  const noise: string[] = [];
  let malformedLines = 0;

  for (const line of lines) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{")) {
      if (trimmed !== "") noise.push(line);
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      malformedLines += 1;
      noise.push(line);
      continue;
    }
    if (!isResultShaped(value)) {
      noise.push(line);
      continue;
    }
    const parsed = isCompleteOteResult(value)
      ? { success: true as const, data: value }
      : oteResultSchema.safeParse(value);
    if (parsed.success) {
      if (!results.has(parsed.data.name)) results.set(parsed.data.name, parsed.data);
    } else {
      const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "record"}: ${i.message}`);
      malformedResults.set(value.name, problems.join("; "));
    }
  }
  return { results, malformedResults, malformedLines, noise };
}

function isResultShaped(value: unknown): value is { name: string; result: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { name?: unknown }).name === "string" &&
    "result" in value
  );
}
