import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { readResultRecords } from "./read-result-records.ts";

/** Every valid record of a results.jsonl file, in order (a batch's records, judged together). */
export async function readAllResultRecords(path: string): Promise<ResultRecord[]> {
  const records: ResultRecord[] = [];
  for await (const record of readResultRecords(path)) records.push(record);
  return records;
}
