import { failedIterations } from "./failed-iterations.ts";
import type { FirstBadPayload } from "./first-bad-payload.ts";
import type { PayloadCounts } from "./payload-counts.ts";
import type { QuarantineEntry } from "./quarantine.ts";

/** The newest stretch of payloads on which a test flaked (failed some iterations, passed others), newest last. */
function flakyStretch(history: readonly PayloadCounts[], test: string): PayloadCounts[] {
  const stretch: PayloadCounts[] = [];
  for (let index = history.length - 1; index >= 0; index--) {
    const counts = history[index]!.tests[test];
    // A payload the test did not run on neither ends nor extends the stretch.
    if (!counts || counts.executions === 0) continue;
    const failed = failedIterations(counts);
    if (failed === 0 || failed >= counts.executions) break;
    stretch.unshift(history[index]!);
  }
  return stretch;
}

const day = (iso: string) => iso.slice(0, 10);

/**
 * The one quarantine list of a PR run on a stream (pure), from two origins: the configured entries
 * as they are, then the derived ones —
 * - a test with a first bad payload on the stream: "also failing on <stream> since <release>: not
 *   caused by this PR", since the day that payload was first run;
 * - a test that flaked on each of the stream's last `flakyPayloads` payloads it ran on (0: never),
 *   since the first payload of that stretch.
 * A test is listed once; the configured entry wins, then the first bad payload.
 */
export function streamQuarantine(input: {
  configured: readonly QuarantineEntry[];
  stream: string;
  history: readonly PayloadCounts[];
  firstBad: readonly FirstBadPayload[];
  flakyPayloads: number;
}): QuarantineEntry[] {
  const entries = new Map<string, QuarantineEntry>();
  const add = (entry: QuarantineEntry) => {
    if (!entries.has(entry.test)) entries.set(entry.test, entry);
  };
  for (const entry of input.configured) add({ ...entry, origin: entry.origin ?? "configured" });
  for (const finding of input.firstBad) {
    add({
      test: finding.test,
      reason: `also failing on ${input.stream} since ${finding.release}: not caused by this PR`,
      since: day(input.history[finding.index]?.recordedAt ?? new Date(0).toISOString()),
      origin: "derived",
    });
  }
  if (input.flakyPayloads > 0) {
    const names = new Set(input.history.flatMap((payload) => Object.keys(payload.tests)));
    for (const test of names) {
      const stretch = flakyStretch(input.history, test);
      if (stretch.length < input.flakyPayloads) continue;
      add({
        test,
        reason: `flaky on ${input.stream} on each of its last ${stretch.length} payloads (quarantined after ${input.flakyPayloads})`,
        since: day(stretch[0]!.recordedAt),
        origin: "derived",
      });
    }
  }
  return [...entries.values()];
}
