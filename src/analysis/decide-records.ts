import type { TestCounts } from "./payload-counts.ts";

/** What the decision step reads of a result record. */
export interface DecideRecord {
  arm: "pr" | "baseline";
  cluster: string;
  iteration: number;
  name: string;
  result: "passed" | "failed" | "skipped";
}

/** One payload of the stream's history of the baseline (released) payload: per test, its iterations. */
export interface DecideHistoryPayload {
  tests: Readonly<Record<string, TestCounts>>;
}
