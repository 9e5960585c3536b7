import type { Arm } from "@netstress/core/model/result-record.ts";
import type { RunRecord } from "./run-record.ts";

/** The payload an arm's clusters run, as its reader calls it. */
export function payloadName(run: RunRecord, arm: Arm): string {
  if (arm === "baseline")
    return run.subject.kind === "gate" ? "the baseline payload" : "the released payload";
  return { pr: "the PR payload", gate: "the candidate payload", periodic: "the payload" }[run.subject.kind];
}
