import type { RepoConfigResult } from "../config/load-repo-config.ts";
import { compileChangedPathPattern } from "../config/changed-path-pattern.ts";
import { runSource } from "../config/run-source.ts";
import type { PrRun, PrSubject } from "../runs/run-record.ts";
import { runIterations } from "../runs/run-iterations.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import { reportConfigProblems } from "./report-config-problems.ts";
import { startStressRuns } from "./start-stress-runs.ts";

/**
 * The automatic runs of a PR head for a repository that opted in: with its configured arches and
 * options, unless the PR is a draft (and drafts are off) or no changed file matches run_if_changed.
 * A configuration that cannot be used is reported on the commit. Returns the runs started.
 */
export async function startAutomaticRuns(
  deps: IntakeDeps,
  octokit: GitHubClient,
  request: {
    target: PullRequestTarget;
    headSha: string;
    draft: boolean;
    config: RepoConfigResult;
    trigger: PrSubject["trigger"];
  },
): Promise<PrRun[]> {
  const { target, headSha, config } = request;
  if (config.kind === "absent") return [];
  if (config.kind === "invalid") {
    await reportConfigProblems(deps, octokit, target, headSha, config.problems);
    return [];
  }
  const settings = config.config;
  if (!settings.automatic || (request.draft && !settings.drafts)) return [];
  if (settings.run_if_changed !== undefined) {
    const pattern = compileChangedPathPattern(settings.run_if_changed);
    const files = await octokit.paginate(octokit.rest.pulls.listFiles, {
      owner: target.owner.login,
      repo: target.repo,
      pull_number: target.pr,
      per_page: 100,
    });
    if (
      !files.some(
        (f) => pattern.matches(f.filename) || (f.previous_filename && pattern.matches(f.previous_filename)),
      )
    ) {
      return [];
    }
  }
  const source = runSource(settings, deps.defaults);
  if (!source.ok) {
    await reportConfigProblems(deps, octokit, target, headSha, source.problems);
    return [];
  }
  const started = await startStressRuns(deps, {
    target,
    headSha,
    arches: settings.arches,
    options: {
      iterations: runIterations({
        iterations: settings.iterations,
        upgradeFrom: settings.upgrade_from,
        clusters: settings.clusters,
      }),
      baseline: settings.baseline,
      ...(settings.focus ? { focus: settings.focus } : {}),
      ...(settings.suite ? { suite: settings.suite } : {}),
      ...(settings.disruptive || settings.upgrade_from ? { includeDisruptive: true } : {}),
      ...(settings.upgrade_from ? { upgradeFrom: settings.upgrade_from } : {}),
    },
    source: source.source,
    trigger: request.trigger,
    slot: "automatic",
    ...(settings.limits.max_run_size ? { maxRunSize: settings.limits.max_run_size } : {}),
  });
  return started.map((s) => s.run);
}
