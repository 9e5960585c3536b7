import { fetchRepoConfig } from "../config/fetch-repo-config.ts";
import { abortRun } from "../queue/abort-run.ts";
import { isActive } from "../runs/run-record.ts";
import { authorizeOnPullRequest } from "../trust/authorize-actor.ts";
import { untrustedReply } from "../trust/untrusted-reply.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import type { IntakeEvent } from "./intake-event.ts";
import { postComment } from "./post-comment.ts";
import { startAutomaticRuns } from "./start-automatic-runs.ts";

type PullRequestEvent = Extract<IntakeEvent, { kind: "pull_request" }>;

/**
 * A push aborts the runs of older heads ("superseded by <sha>"), closing aborts everything, and an
 * opted-in repository's PR gets its automatic runs when its author may run them (or a trusted user
 * said /ok-to-test). An untrusted author is told once, when the PR is opened.
 */
export async function handlePullRequest(deps: IntakeDeps, event: PullRequestEvent): Promise<void> {
  const target: PullRequestTarget = {
    installationId: event.installationId,
    owner: event.owner,
    repo: event.repo,
    pr: event.pr,
  };
  const runs = await deps.store.listForPullRequest(event.owner.login, event.repo, event.pr);
  const reason = event.action === "closed" ? "the pull request was closed" : `superseded by ${event.headSha}`;
  for (const run of runs) {
    if (isActive(run) && (event.action === "closed" || run.subject.headSha !== event.headSha)) {
      await abortRun(deps, run.id, reason);
    }
  }
  if (event.action === "closed") return;

  const octokit = await deps.githubFor(event.installationId);
  const config = await fetchRepoConfig(octokit, event.owner.login, event.repo);
  if (config.kind === "valid" && config.config.automatic) {
    const authorization = await authorizeOnPullRequest({
      octokit,
      owner: event.owner,
      repo: event.repo,
      actor: event.author,
      trustedApps: deps.trustedApps,
      pullRequest: { author: event.author.login, labels: event.labels },
    });
    if (!authorization.trusted) {
      const once = () =>
        deps.store.claimPullRequestReply({
          owner: event.owner.login,
          repo: event.repo,
          pr: event.pr,
          kind: "untrusted",
        });
      if (event.action === "opened" && (await once())) {
        await postComment(
          deps,
          octokit,
          target,
          untrustedReply({ login: event.author.login, owner: event.owner.login, isAuthor: true }),
        );
      }
      return;
    }
  }
  await startAutomaticRuns(deps, octokit, {
    target,
    headSha: event.headSha,
    draft: event.draft,
    config,
    trigger: { kind: "pull_request", actor: event.sender.login, deliveryId: event.deliveryId },
  });
}
