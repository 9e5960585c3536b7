import type { GitHubClient } from "../trust/github-client.ts";
import { parseRepoConfig, type RepoConfigResult } from "./load-repo-config.ts";
import { REPO_CONFIG_PATH } from "./repo-config.ts";
import { readGitHubApiError } from "../trust/github-api-error.ts";

/** Reads `.github/network-stress.yml` from the default branch (never the PR's) and checks it. */
export async function fetchRepoConfig(
  octokit: GitHubClient,
  owner: string,
  repo: string,
): Promise<RepoConfigResult> {
  try {
    const response = await octokit.rest.repos.getContent({
      owner,
      repo,
      path: REPO_CONFIG_PATH,
      mediaType: { format: "raw" },
    });
    return parseRepoConfig(String(response.data));
  } catch (error) {
    if (readGitHubApiError(error)?.status === 404) {
      return parseRepoConfig(undefined);
    }
    throw error;
  }
}
