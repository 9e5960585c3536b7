import type { AggregatedRun, TestVerdict } from "./types.ts";

/** A test taken out of PR conclusions: it still runs and is reported, with why and since when. */
export interface QuarantineEntry {
  test: string;
  reason: string;
  /** When it was quarantined (ISO 8601 date). */
  since: string;
  /** configured: the operator's list (the default); derived: from the stream's history (stream-quarantine.ts). */
  origin?: "configured" | "derived";
}

/**
 * Quarantined tests are judged as informing: they run, they are counted and shown, and they never
 * fail the conclusion (pure). Returns the run to judge and the verdicts' marking step.
 */
export function quarantineTests(
  run: AggregatedRun,
  entries: readonly QuarantineEntry[],
): { run: AggregatedRun; mark: (tests: TestVerdict[]) => TestVerdict[] } {
  if (entries.length === 0) return { run, mark: (tests) => tests };
  const byName = new Map(entries.map((entry) => [entry.test, entry]));
  return {
    run: {
      ...run,
      tests: run.tests.map((test) => (byName.has(test.name) ? { ...test, lifecycle: "informing" } : test)),
    },
    mark: (tests) =>
      tests.map((test) => {
        const entry = byName.get(test.name);
        return entry ? { ...test, quarantine: { reason: entry.reason, since: entry.since } } : test;
      }),
  };
}
