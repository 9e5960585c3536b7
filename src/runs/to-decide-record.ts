import type { DecideRecord } from "../analysis/decide-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";

/** A record as the decision step reads it: an iteration run against no cluster of ours counts as one. */
export function toDecideRecord(record: ResultRecord): DecideRecord {
  return {
    arm: record.arm,
    cluster: record.cluster ?? "(the executor's cluster)",
    iteration: record.iteration,
    name: record.name,
    result: record.result === "failed" ? "failed" : record.result === "skipped" ? "skipped" : "passed",
  };
}
