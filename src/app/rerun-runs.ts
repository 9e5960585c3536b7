import type { RepoConfigResult } from "../config/load-repo-config.ts";
import { runSourceFor } from "../config/run-source.ts";
import type { PrRun, PrSubject } from "../runs/run-record.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import { reportConfigProblems } from "./report-config-problems.ts";
import { startStressRuns, type StressRun } from "./start-stress-runs.ts";

/**
 * Runs the same request again (same commit, arch and options) with the repository's current
 * configuration, so a rerun after fixing the configuration uses the fix.
 */
export async function rerunRuns(
  deps: IntakeDeps,
  octokit: GitHubClient,
  request: {
    target: PullRequestTarget;
    runs: readonly PrRun[];
    config: RepoConfigResult;
    trigger: PrSubject["trigger"];
    slot: string;
  },
): Promise<StressRun[]> {
  const { target, config, runs } = request;
  if (runs.length === 0) return [];
  const source = runSourceFor(config, deps.defaults);
  if (!source.ok) {
    await reportConfigProblems(deps, octokit, target, runs[0]!.subject.headSha, source.problems);
    return [];
  }
  const results = [];
  for (const run of runs) {
    results.push(
      ...(await startStressRuns(deps, {
        target,
        headSha: run.subject.headSha,
        arches: [run.arch],
        options: run.options,
        source: source.source,
        trigger: request.trigger,
        slot: request.slot,
        ...(config.kind === "valid" && config.config.limits.max_run_size
          ? { maxRunSize: config.config.limits.max_run_size }
          : {}),
      })),
    );
  }
  return results;
}
