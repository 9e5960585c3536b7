import type { RunRecord } from "./run-record.ts";

/**
 * What a run is for, in words for the bot's pages (pure): who asked (the PR, the gate, the
 * periodic) and what it ran (the commit, the candidate payload, the release).
 */
export function describeSubject(run: RunRecord): { kind: string; what: string; ran: string } {
  const { subject } = run;
  switch (subject.kind) {
    case "pr":
      return {
        kind: "pr",
        what: `${subject.owner}/${subject.repo}#${subject.pr}`,
        ran: subject.headSha.slice(0, 12),
      };
    case "gate":
      return { kind: "gate", what: `gate ${subject.gateId}`, ran: subject.payload };
    case "periodic":
      return { kind: "periodic", what: `periodic ${subject.periodic}`, ran: subject.release };
  }
}
