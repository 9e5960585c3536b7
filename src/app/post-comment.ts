import { githubWrite } from "../github/github-write.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import { permissionAdvice } from "./permission-advice.ts";

/**
 * One comment on the PR, within the bot's GitHub write budget. The first reply after GitHub refused
 * a write for a missing permission also says which one to grant.
 */
export async function postComment(
  deps: IntakeDeps,
  octokit: GitHubClient,
  target: PullRequestTarget,
  body: string,
): Promise<void> {
  const budget = deps.budgets(target.installationId);
  const missing = await budget.permissionAdvice();
  const advice = missing === undefined ? "" : `\n\n${permissionAdvice(missing, target.owner.login)}`;
  await githubWrite(
    budget,
    () =>
      octokit.rest.issues.createComment({
        owner: target.owner.login,
        repo: target.repo,
        issue_number: target.pr,
        body: `${body}${advice}`,
      }),
    { isReply: true },
  );
  if (missing !== undefined) await budget.advised();
}
