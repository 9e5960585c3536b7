import type { RunRecord } from "./run-record.ts";

/**
 * The few sentences whose words depend on the run's subject: a PR author reads about the shard
 * (its iterations can be extended with `more`), a release gate's caller about payloads and arches.
 */
export const runWording = {
  planFailed: (run: RunRecord, message: string): string =>
    run.subject.kind === "gate"
      ? `the payloads could not be resolved for ${run.arch}: ${message}`
      : `plan resolution failed: ${message}`,
  executorFailed: (run: RunRecord, input: { executor: string; shardId: string; reason: string }): string =>
    `the ${input.executor} executor could not run ${run.subject.kind === "gate" ? run.arch : `shard ${input.shardId}`}: ${input.reason}`,
};
