import type { AllowedReleases } from "../commands/allowed-releases.ts";
import type { BotSettings } from "../config/bot-settings.ts";
import type { GitHubWriteBudgets } from "../github/github-write-budget.ts";
import type { RunDeps } from "../queue/run-deps.ts";
import type { GitHubClient } from "../trust/github-client.ts";

/** What the intake worker needs besides the run machinery. */
export interface IntakeDeps extends RunDeps {
  /** An installation's client (Probot's `auth(installationId)`). */
  githubFor(installationId: number): Promise<GitHubClient>;
  /** Each installation's budget, shared by every GitHub write of every process (comments, check runs). */
  budgets: GitHubWriteBudgets;
  /** Base of the bot's run pages. */
  publicUrl: string;
  /** Keys run ids (unguessable run page addresses). */
  runIdSecret: string;
  trustedApps: readonly string[];
  defaults: BotSettings["defaults"];
  quotas: BotSettings["quotas"];
  /** What upgrade-from= may name (the operator's release streams and repositories). */
  releases: AllowedReleases;
}

/** A pull request of an installation. */
export interface PullRequestTarget {
  installationId: number;
  owner: { login: string; type: string };
  repo: string;
  pr: number;
  /** Whether the repository is private (see IntakeEvent's privateRepository). */
  privateRepository: boolean;
}
