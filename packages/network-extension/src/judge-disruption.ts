import type { Disruption } from "@netstress/core/model/disruption-schema.ts";
import type { ProbeSessionOutcome } from "./probe-session.ts";

/**
 * The verdict of a test over the disruption it is about: failed when any of it exceeds its budget,
 * or when the probes could not tell (setup failed, a probe pod vanished, the action failed); the
 * output lists every path's figures and intervals, so a failure says which path, when and why.
 */
export function judgeDisruption(options: {
  outcome: ProbeSessionOutcome;
  disruption: Disruption[];
  what: string;
}): { result: "passed" | "failed"; output: string; error?: string } {
  const { outcome, disruption } = options;
  const lines = [...outcome.notes];
  for (const d of disruption) {
    lines.push(
      `${d.path} over ${d.connection} connections: failing ${d.disruptedSeconds}s of ${d.observedSeconds}s observed (budget ${d.budgetSeconds}s)`,
    );
    for (const i of d.intervals.slice(0, 20)) {
      lines.push(`  ${i.from} → ${i.to} ${i.source ?? "?"} → ${i.target ?? "?"}: ${i.reason}`);
    }
    if (d.intervals.length > 20) lines.push(`  … and ${d.intervals.length - 20} more intervals`);
  }
  const over = disruption.filter((d) => d.disruptedSeconds > d.budgetSeconds);
  const reasons = [
    ...outcome.problems,
    ...over.map(
      (d) =>
        `${d.path} over ${d.connection} connections was failing for ${d.disruptedSeconds}s ${options.what} (budget ${d.budgetSeconds}s)`,
    ),
  ];
  if (outcome.disruption === undefined && outcome.problems.length === 0)
    reasons.push("the probes reported nothing");
  const output = [...lines, ...outcome.problems.map((p) => `problem: ${p}`)].join("\n");
  return reasons.length > 0
    ? { result: "failed", output, error: reasons.join("; ") }
    : { result: "passed", output };
}
