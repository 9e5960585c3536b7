import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { isCompleteResultRecord } from "./is-complete-result-record.ts";
import { resultRecordSchema, type ResultRecord } from "@netstress/core/model/result-record.ts";

/** Streams the valid records of a results.jsonl file; invalid lines go to `onInvalid`. */
export async function* readResultRecords(
  path: string,
  onInvalid: (lineNumber: number, reason: string) => void = () => {},
): AsyncGenerator<ResultRecord> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber += 1;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      onInvalid(lineNumber, "not JSON");
      continue;
    }
    // The runner's own lines pass the fast check; zod judges (and explains) the rest.
    if (isCompleteResultRecord(value)) {
      yield value;
      continue;
    }
    const parsed = resultRecordSchema.safeParse(value);
    if (parsed.success) yield parsed.data;
    else
      onInvalid(lineNumber, parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  }
}
