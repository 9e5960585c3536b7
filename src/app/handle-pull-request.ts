import { fetchRepoConfig } from "../config/fetch-repo-config.ts";
import { githubWrite } from "../github/github-write.ts";
import { abortRun } from "../queue/abort-run.ts";
import { isActive } from "../runs/run-record.ts";
import { authorizeActor, authorizeOnPullRequest, OK_TO_TEST_LABEL } from "../trust/authorize-actor.ts";
import { untrustedReply } from "../trust/untrusted-reply.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import type { IntakeEvent } from "./intake-event.ts";
import { postComment } from "./post-comment.ts";
import { startAutomaticRuns } from "./start-automatic-runs.ts";

type PullRequestEvent = Extract<IntakeEvent, { kind: "pull_request" }>;

/**
 * A push aborts the runs of older heads ("superseded by <sha>"), closing aborts everything, and an
 * opted-in repository's PR gets its automatic runs when both its author and whoever pushed may run
 * them (an outside author once a trusted user approved the head with /ok-to-test). An untrusted
 * author is told once per PR. The ok-to-test label, added by someone untrusted, is taken off again.
 */
export async function handlePullRequest(deps: IntakeDeps, event: PullRequestEvent): Promise<void> {
  const target: PullRequestTarget = {
    installationId: event.installationId,
    owner: event.owner,
    repo: event.repo,
    pr: event.pr,
    privateRepository: event.privateRepository,
  };
  if (event.action === "labeled") return checkApprovalLabel(deps, event, target);
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
    const common = { octokit, owner: event.owner, repo: event.repo, trustedApps: deps.trustedApps };
    const authorization = await authorizeOnPullRequest({
      ...common,
      actor: event.author,
      pullRequest: { author: event.author.login, headSha: event.headSha },
      approval: await deps.store.approvalOf({ owner: event.owner.login, repo: event.repo, pr: event.pr }),
      approvePushes: config.config.approve_pushes,
    });
    // Whoever pushed someone else's PR branch must be trusted in their own right.
    const pusher =
      event.action === "synchronize" && event.sender.login !== event.author.login
        ? await authorizeActor({ ...common, actor: event.sender })
        : authorization;
    if (!authorization.trusted || !pusher.trusted) {
      const once = () =>
        deps.store.claimPullRequestReply({
          owner: event.owner.login,
          repo: event.repo,
          pr: event.pr,
          kind: "untrusted",
        });
      if (!authorization.trusted && (await once())) {
        await postComment(
          deps,
          octokit,
          target,
          untrustedReply({ login: event.author.login, owner: event.owner.login, isAuthor: true }),
        );
      }
      deps.log.info(
        { pr: event.pr, author: event.author.login, pusher: event.sender.login, head: event.headSha },
        "automatic runs not started: the author's head is not approved, or the pusher is not trusted",
      );
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

/**
 * The ok-to-test label authorizes nothing by itself; added by a trusted user it records their
 * approval of the current head (as /ok-to-test does), added by anyone else it is removed with a reply.
 */
async function checkApprovalLabel(
  deps: IntakeDeps,
  event: PullRequestEvent,
  target: PullRequestTarget,
): Promise<void> {
  const octokit = await deps.githubFor(event.installationId);
  const labeler = await authorizeActor({
    octokit,
    owner: event.owner,
    repo: event.repo,
    actor: event.sender,
    trustedApps: deps.trustedApps,
  });
  if (labeler.trusted) {
    await deps.store.recordApproval({
      owner: event.owner.login,
      repo: event.repo,
      pr: event.pr,
      approval: { approver: event.sender.login, headSha: event.headSha, at: new Date().toISOString() },
    });
    return;
  }
  await githubWrite(deps.budgets(event.installationId), () =>
    octokit.rest.issues.removeLabel({
      owner: event.owner.login,
      repo: event.repo,
      issue_number: event.pr,
      name: OK_TO_TEST_LABEL,
    }),
  );
  await postComment(
    deps,
    octokit,
    target,
    `@${event.sender.login}: the \`${OK_TO_TEST_LABEL}\` label approves nothing when added by someone who may not start runs, so it was removed. Members of the organization and collaborators with write access approve with \`/ok-to-test\`.`,
  );
}
