import type { Arm } from "../runner/result-record.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * The payload an arm's clusters under test must run: a gate's candidate and baseline, a periodic's
 * payload, a PR run's configured payload for the baseline arm and the PR payload (the payload with
 * the PR's images, checked or assembled when the run was planned) for its own. A PR run planned
 * without one (no clusters under test then) runs the configured payload in both arms. Undefined
 * when the run names no payload (a release stream alone).
 */
export function armPayload(run: RunRecord, arm: Arm): string | undefined {
  switch (run.subject.kind) {
    case "gate":
      return arm === "pr" ? run.subject.payload : run.subject.baselinePayload;
    case "periodic":
      return run.subject.payload;
    case "pr":
      return arm === "pr" ? (run.payloads?.pr ?? run.source.payload) : run.source.payload;
  }
}
