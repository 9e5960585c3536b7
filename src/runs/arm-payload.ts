import type { Arm } from "@netstress/core/model/result-record.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * The payload an arm's clusters under test must run, by digest once the run is resolved (its
 * `payloads`): a gate's candidate and baseline, a periodic's payload, a PR run's PR payload and
 * the payload it was tested against (the configured one or its stream's latest). Before that, and
 * for runs resolved without them, what the subject or source names; undefined when nothing does.
 */
export function armPayload(run: RunRecord, arm: Arm): string | undefined {
  const resolved = run.payloads?.[arm];
  if (resolved) return resolved;
  switch (run.subject.kind) {
    case "gate":
      return arm === "pr" ? run.subject.payload : run.subject.baselinePayload;
    case "periodic":
      return run.subject.payload;
    case "pr":
      return run.source.payload;
  }
}
