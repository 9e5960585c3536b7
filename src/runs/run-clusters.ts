import { DEFAULT_CLUSTERS_PER_ARM } from "../config/cluster-count.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * Clusters under test a run holds at once while it runs: each arm's (the PR arm, and the baseline
 * arm when it is compared against a payload) times its clusters per arm.
 */
export function runClusters(run: Pick<RunRecord, "options" | "source" | "plan">): number {
  const arms = run.plan?.arms.length ?? (run.options.baseline === "payload" ? 2 : 1);
  return arms * (run.source.clusters ?? DEFAULT_CLUSTERS_PER_ARM);
}
