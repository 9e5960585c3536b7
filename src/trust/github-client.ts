import type { ProbotOctokit } from "probot";

/** An authenticated GitHub client (Probot's Octokit with its REST methods). */
export type GitHubClient = InstanceType<typeof ProbotOctokit>;
