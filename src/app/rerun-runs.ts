import type { RepoConfigResult } from "../config/load-repo-config.ts";
import { runSourceFor } from "../config/run-source.ts";
import type { RunRecord } from "../queue/run-record.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import { reportConfigProblems } from "./report-config-problems.ts";
import { startStressRuns } from "./start-stress-runs.ts";

/**
 * Runs the same request again (same commit, arch and options) with the repository's current
 * configuration, so a rerun after fixing the configuration uses the fix.
 */
export async function rerunRuns(
  deps: IntakeDeps,
  octokit: GitHubClient,
  request: {
    target: PullRequestTarget;
    runs: readonly RunRecord[];
    config: RepoConfigResult;
    trigger: RunRecord["trigger"];
    slot: string;
  },
): Promise<{ run: RunRecord; created: boolean }[]> {
  const { target, config, runs } = request;
  if (runs.length === 0) return [];
  const source = runSourceFor(config, deps.defaults);
  if (!source.ok) {
    await reportConfigProblems(deps, octokit, target, runs[0]!.headSha, source.problems);
    return [];
  }
  const results = [];
  for (const run of runs) {
    results.push(
      ...(await startStressRuns(deps, {
        target,
        headSha: run.headSha,
        arches: [run.arch],
        options: run.options,
        source: source.source,
        trigger: request.trigger,
        slot: request.slot,
      })),
    );
  }
  return results;
}
