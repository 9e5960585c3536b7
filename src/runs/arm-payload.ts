import type { Arm } from "../runner/result-record.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * The payload an arm's clusters under test must run: a gate's candidate and baseline, a periodic's
 * payload, a PR run's configured payload for the baseline arm. A PR run's own arm runs the payload
 * with the PR's images once the run assembles one; until then its clusters run the configured
 * payload too, and only the test binaries differ. Undefined when the run names no payload (a
 * release stream alone).
 */
export function armPayload(run: RunRecord, arm: Arm): string | undefined {
  switch (run.subject.kind) {
    case "gate":
      return arm === "pr" ? run.subject.payload : run.subject.baselinePayload;
    case "periodic":
      return run.subject.payload;
    case "pr":
      return run.source.payload;
  }
}
