import { isCompleteResultRecord } from "../runner/is-complete-result-record.ts";
import { resultRecordSchema, type ResultRecord } from "@netstress/core/model/result-record.ts";

export type ParsedLine = { ok: true; record: ResultRecord } | { ok: false; reason: string };

/** Parses one results.jsonl line at the boundary; a bad line is a reason, never an exception. */
export function parseResultLine(line: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  if (isCompleteResultRecord(value)) return { ok: true, record: value };
  const parsed = resultRecordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: `not a result record: ${issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "invalid"}`,
    };
  }
  return { ok: true, record: parsed.data };
}
