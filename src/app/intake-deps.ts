import type { BotSettings } from "../config/bot-settings.ts";
import type { RunDeps } from "../queue/run-deps.ts";

/** What the intake worker needs besides the run machinery. */
export interface IntakeDeps extends RunDeps {
  /** Keys run ids (unguessable run page addresses). */
  runIdSecret: string;
  trustedApps: readonly string[];
  defaults: BotSettings["defaults"];
}

/** A pull request of an installation. */
export interface PullRequestTarget {
  installationId: number;
  owner: { login: string; type: string };
  repo: string;
  pr: number;
}
