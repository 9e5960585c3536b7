import { parseBudget } from "./parse-budget.ts";
import { parseTarget } from "./parse-target.ts";
import type { RepoConfig } from "./repo-config.ts";

/** What an adaptive run is asked to decide and may spend, read from a valid configuration. */
export interface AdaptiveSettings {
  /** Detect a rise from `from` to `to` in a test's failure probability. */
  target: { from: number; to: number };
  /** At most the test executions of a fixed run of this many iterations per arm. */
  budgetIterations: number;
}

/** The adaptive settings of a repository configuration; undefined for mode: fixed. */
export function adaptiveSettings(
  config: Pick<RepoConfig, "mode" | "target" | "budget">,
): AdaptiveSettings | undefined {
  if (config.mode !== "adaptive" || config.budget === undefined) return undefined;
  return {
    target: parseTarget(config.target),
    budgetIterations: parseBudget(config.budget),
  };
}
