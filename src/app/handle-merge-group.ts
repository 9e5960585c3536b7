import type { Arch } from "@netstress/core/arch/arch.ts";
import { fetchRepoConfig } from "../config/fetch-repo-config.ts";
import { REPO_CONFIG_PATH } from "../config/repo-config.ts";
import { checkRunName } from "../github/check-run-view.ts";
import { githubWrite } from "../github/github-write.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import type { IntakeEvent } from "./intake-event.ts";
import { QuotaExceeded } from "./quota-exceeded.ts";
import { reportConfigProblems } from "./report-config-problems.ts";
import { startAutomaticRuns } from "./start-automatic-runs.ts";

type MergeGroupEvent = Extract<IntakeEvent, { kind: "merge_group" }>;

/** GitHub names a merge group's branch after the pull request at its tip. */
const MERGE_QUEUE_REF = /^refs\/heads\/gh-readonly-queue\/.+\/pr-(\d+)-[0-9a-f]{40}$/;

/**
 * A merge queue waits for the required checks on the merge group's commit; an app that does not
 * answer blocks the queue. Every `network-stress (<arch>)` check therefore gets an answer there:
 * with `merge_queue: skip` (the default) a successful check saying the runs happened on the pull
 * requests; with `run`, a run of the merge group's commit (its check run concludes like a PR's).
 * Adding to a merge queue takes write access and the branch's approvals, so nobody else is asked.
 */
export async function handleMergeGroup(deps: IntakeDeps, event: MergeGroupEvent): Promise<void> {
  const octokit = await deps.githubFor(event.installationId);
  const config = await fetchRepoConfig(octokit, event.owner.login, event.repo);
  const pr = Number(MERGE_QUEUE_REF.exec(event.headRef)?.[1] ?? 0);
  const target: PullRequestTarget = {
    installationId: event.installationId,
    owner: event.owner,
    repo: event.repo,
    pr,
    privateRepository: event.privateRepository,
  };
  if (config.kind === "invalid") {
    await reportConfigProblems(deps, octokit, target, event.headSha, config.problems);
    return;
  }
  const settings = config.config;
  const skip = (why: string) =>
    concludeChecks(deps, octokit, event, settings.arches, {
      conclusion: "success",
      title: "Not run in the merge queue: the pull requests were stress-tested",
      summary: why,
    });
  if (settings.merge_queue === "skip") {
    return skip(
      `network-stress ran on the pull requests of this merge group (into \`${event.baseRef}\`), ` +
        `not on the group's commit: \`merge_queue: skip\` in \`${REPO_CONFIG_PATH}\`. ` +
        `Set \`merge_queue: run\` to run the merge group's commit before it merges.`,
    );
  }
  if (pr === 0) {
    return skip(
      `\`merge_queue: run\`, but \`${event.headRef}\` is not a merge queue branch naming its pull request, so nothing ran.`,
    );
  }
  try {
    const started = await startAutomaticRuns(deps, octokit, {
      target,
      headSha: event.headSha,
      draft: false,
      // A merge group runs whether or not pushes run automatically.
      config: { ...config, config: { ...settings, automatic: true } },
      trigger: { kind: "merge_group", actor: event.sender.login, deliveryId: event.deliveryId },
    });
    if (started.length === 0) {
      await skip(`No changed file of #${pr} matches \`run_if_changed\`, so the merge group needs no run.`);
    }
  } catch (error) {
    if (!(error instanceof QuotaExceeded)) throw error;
    // Unanswered, the check would hold the whole queue: say why it did not run instead.
    await concludeChecks(deps, octokit, event, settings.arches, {
      conclusion: "action_required",
      title: "Not run: a quota of active runs is reached",
      summary: error.message,
    });
  }
}

async function concludeChecks(
  deps: IntakeDeps,
  octokit: GitHubClient,
  event: MergeGroupEvent,
  arches: readonly Arch[],
  output: { conclusion: "success" | "action_required"; title: string; summary: string },
): Promise<void> {
  const { conclusion, ...text } = output;
  for (const arch of arches) {
    await githubWrite(deps.budgets(event.installationId), () =>
      octokit.rest.checks.create({
        owner: event.owner.login,
        repo: event.repo,
        name: checkRunName(arch),
        head_sha: event.headSha,
        status: "completed",
        conclusion,
        completed_at: new Date().toISOString(),
        output: text,
      }),
    );
  }
}
