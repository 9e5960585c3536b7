import type { Logger } from "pino";
import type { GitHubClient } from "../trust/github-client.ts";
import type { AbortBus } from "./abort-bus.ts";
import type { GitHubWriteBudget } from "./github-write-budget.ts";
import { publishCheckRun } from "./publish-check-run.ts";
import type { RunEvent } from "./run-events.ts";
import type { RunQueues } from "./run-queues.ts";
import type { RunRecord } from "./run-record.ts";
import type { RunStore } from "./run-store.ts";

/** What the intake and the workers share to change runs and show them on GitHub. */
export interface RunDeps {
  store: RunStore;
  queues: RunQueues;
  budget: GitHubWriteBudget;
  abortBus: AbortBus;
  /** Base of the bot's run pages (check runs' details_url). */
  publicUrl: string;
  /** An installation's client (Probot's `auth(installationId)`). */
  githubFor(installationId: number): Promise<GitHubClient>;
  log: Logger;
}

/** The deps of one run's stage: its logs carry the run id and the delivery that asked for it. */
export function runScoped(deps: RunDeps, run: RunRecord): RunDeps {
  return { ...deps, log: deps.log.child({ runId: run.id, deliveryId: run.trigger.deliveryId }) };
}

/** Publishes the run's current state as its check run. */
export async function publishRun(deps: RunDeps, run: RunRecord): Promise<RunRecord | undefined> {
  const octokit = await deps.githubFor(run.installationId);
  return publishCheckRun(
    { octokit, budget: deps.budget, store: deps.store, publicUrl: deps.publicUrl },
    run.id,
  );
}

/** Applies an event and, when it changed the run, shows the change on GitHub. */
export async function applyAndPublish(
  deps: RunDeps,
  runId: string,
  event: RunEvent,
): Promise<RunRecord | undefined> {
  const run = await deps.store.apply(runId, event);
  if (run) await publishRun(deps, run);
  return run;
}
