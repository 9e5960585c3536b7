import type { DecideHistoryPayload } from "../analysis/decide-records.ts";
import type { PayloadCounts } from "../analysis/payload-counts.ts";
import { samePayload } from "../registry/same-payload.ts";
import { armPayload } from "./arm-payload.ts";
import type { RunRecord } from "./run-record.ts";

/** A payload of the stream's history in the form the decision step reads, named for the report. */
export interface BaselineHistoryPayload extends DecideHistoryPayload {
  release: string;
  payload: string;
}

/**
 * What of its stream's history (`readPayloadHistory` of the run's release stream and arch, oldest
 * first) may stand in for a crossover's baseline arm: the payloads up to and including the one
 * the baseline arm runs. Only a released payload has a history, so a baseline payload the stream
 * never recorded (a PR payload, another stream's) gets none, and neither does a run without a
 * release stream or a baseline payload; a later payload is not the baseline's weather and is left
 * out. Only counts per test go on: nothing of the run's own code reads them.
 */
export function baselineHistory(run: RunRecord, history: readonly PayloadCounts[]): BaselineHistoryPayload[] {
  const baseline = armPayload(run, "baseline");
  if (!run.source.releaseStream || !baseline) return [];
  const at = history.findIndex((entry) => entry.payload === baseline || samePayload(entry.payload, baseline));
  return history
    .slice(0, at + 1)
    .map(({ release, payload, tests }) => ({ release, payload, tests: structuredClone(tests) }));
}
