import type { GitHubClient } from "./github-client.ts";
import type { Approval } from "./approval.ts";
import { readGitHubApiError } from "./github-api-error.ts";

export const OK_TO_TEST_LABEL = "ok-to-test";

export type Authorization =
  { trusted: true; via: "trusted-app" | "org-member" | "collaborator" | "ok-to-test" } | { trusted: false };

export interface Actor {
  login: string;
  /** GitHub's account type: "User", "Bot" or "Organization". */
  type: string;
}

/**
 * Whether someone may start runs in a repository: a configured trusted app, a member of the
 * owning organization, or a collaborator with write access (maintain and admin include it). Apps
 * are trusted only by name, never through membership lookups.
 */
export async function authorizeActor(options: {
  octokit: GitHubClient;
  owner: { login: string; type: string };
  repo: string;
  actor: Actor;
  trustedApps: readonly string[];
}): Promise<Authorization> {
  const { octokit, owner, repo, actor } = options;
  if (actor.type === "Bot") {
    const trusted = options.trustedApps.some((app) => app.toLowerCase() === actor.login.toLowerCase());
    return trusted ? { trusted: true, via: "trusted-app" } : { trusted: false };
  }
  if (owner.type === "Organization" && (await isOrgMember(octokit, owner.login, actor.login))) {
    return { trusted: true, via: "org-member" };
  }
  return (await hasWriteAccess(octokit, owner.login, repo, actor.login))
    ? { trusted: true, via: "collaborator" }
    : { trusted: false };
}

/**
 * Whether someone may start runs on one PR: trusted as above, or the PR's own author once a trusted
 * user approved the PR with /ok-to-test (as Prow's trigger allows). The label is only a sign: the
 * approval is the recorded approver and the head they approved. With `approvePushes: "every"` a new
 * push needs approving again; the approver is checked again whenever the approval is used, so it
 * ends with their membership.
 */
export async function authorizeOnPullRequest(options: {
  octokit: GitHubClient;
  owner: { login: string; type: string };
  repo: string;
  actor: Actor;
  trustedApps: readonly string[];
  pullRequest: { author: string; headSha: string };
  approval: Approval | undefined;
  approvePushes: "once" | "every";
}): Promise<Authorization> {
  const { actor, pullRequest, approval } = options;
  const own = await authorizeActor(options);
  if (own.trusted || actor.login !== pullRequest.author || !approval) return own;
  if (options.approvePushes === "every" && approval.headSha !== pullRequest.headSha)
    return { trusted: false };
  const approver = await authorizeActor({ ...options, actor: { login: approval.approver, type: "User" } });
  return approver.trusted ? { trusted: true, via: "ok-to-test" } : { trusted: false };
}
async function isOrgMember(octokit: GitHubClient, org: string, username: string): Promise<boolean> {
  try {
    const response = await octokit.rest.orgs.checkMembershipForUser({ org, username });
    return (response.status as number) === 204;
  } catch (error) {
    if (readGitHubApiError(error)?.status === 404) return false;
    throw error;
  }
}

async function hasWriteAccess(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  username: string,
): Promise<boolean> {
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username });
    return data.permission === "admin" || data.permission === "write";
  } catch (error) {
    if (readGitHubApiError(error)?.status === 404) return false;
    throw error;
  }
}
