import { REPO_CONFIG_PATH } from "../config/repo-config.ts";
import { CHECK_RUN_PREFIX } from "../github/check-run-view.ts";
import { githubWrite } from "../github/github-write.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";

/**
 * A repository configuration that cannot be used is reported where people look, as a check run on
 * the commit that would have run (conclusion action_required), never swallowed.
 */
export async function reportConfigProblems(
  deps: IntakeDeps,
  octokit: GitHubClient,
  target: PullRequestTarget,
  headSha: string,
  problems: readonly string[],
): Promise<void> {
  await githubWrite(deps.budgets(target.installationId), () =>
    octokit.rest.checks.create({
      owner: target.owner.login,
      repo: target.repo,
      name: CHECK_RUN_PREFIX,
      head_sha: headSha,
      status: "completed",
      conclusion: "action_required",
      details_url: `${deps.publicUrl}/schemas/network-stress.schema.json`,
      output: {
        title: `${REPO_CONFIG_PATH} cannot be used`,
        summary: [
          `Nothing ran because the default branch's \`${REPO_CONFIG_PATH}\` has ${problems.length} problem(s):`,
          "",
          ...problems.map((p) => `- ${p}`),
          "",
          `Fix it on the default branch, then comment \`/retest\` or push again. The file's JSON Schema is linked as details.`,
        ]
          .join("\n")
          .slice(0, 65_000),
      },
    }),
  );
}
