import type { RunRecord } from "./run-record.ts";

/**
 * The few sentences whose words depend on the run's subject: a PR author reads about the shard
 * (its iterations can be extended with `more`), a gate's caller or a periodic's reader about payloads
 * and arches.
 */
export const runWording = {
  planFailed: (run: RunRecord, message: string): string =>
    run.subject.kind === "pr"
      ? `plan resolution failed: ${message}`
      : `the payloads could not be resolved for ${run.arch}: ${message}`,
  /** The cluster source could not hand out the run's clusters: infrastructure, never the PR's fault. */
  clustersUnavailable: (run: RunRecord, message: string): string =>
    `no clusters under test for ${run.arch} (an infrastructure problem, not a test failure): ${message}`,
  /** What an upgrade run is: both arms start at one release and upgrade to their own payload. */
  upgradeRun: (run: RunRecord): string | undefined =>
    run.options.upgradeFrom
      ? `an upgrade run: both arms' clusters started at ${run.options.upgradeFrom}${run.payloads?.upgradeFrom && run.payloads.upgradeFrom !== run.options.upgradeFrom ? ` (${run.payloads.upgradeFrom})` : ""}; the PR arm's upgraded to the PR payload, the baseline's to the released one`
      : undefined,
  executorFailed: (run: RunRecord, input: { executor: string; shardId: string; reason: string }): string =>
    `the ${input.executor} executor could not run ${run.subject.kind === "pr" ? `shard ${input.shardId}` : run.arch}: ${input.reason}`,
};
