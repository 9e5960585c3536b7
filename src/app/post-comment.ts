import { githubWrite } from "../github/github-write.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";

/** One comment on the PR, within the bot's GitHub write budget. */
export async function postComment(
  deps: IntakeDeps,
  octokit: GitHubClient,
  target: PullRequestTarget,
  body: string,
): Promise<void> {
  await githubWrite(deps.budgets(target.installationId), () =>
    octokit.rest.issues.createComment({
      owner: target.owner.login,
      repo: target.repo,
      issue_number: target.pr,
      body,
    }),
  );
}
