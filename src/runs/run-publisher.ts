import type { RunRecord } from "./run-record.ts";

/**
 * Who is told about a run (the check run of a PR, the record of a gate): called after every change
 * the run store accepted, with the run as stored. Returns the run as it stands afterwards.
 */
export type PublishRun = (run: RunRecord) => Promise<RunRecord | undefined>;
