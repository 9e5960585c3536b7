import type { PublishRun } from "../runs/run-publisher.ts";
import { isPrRun, type RunRecord } from "../runs/run-record.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import { checkRunView } from "./check-run-view.ts";
import { githubWrite } from "./github-write.ts";
import type { GitHubWriteBudgets } from "./github-write-budget.ts";

export interface CheckRunPublisherDeps {
  store: {
    get(id: string): Promise<RunRecord | undefined>;
    setCheckRunId(id: string, checkRunId: number): Promise<RunRecord | undefined>;
  };
  budgets: GitHubWriteBudgets;
  /** An installation's client (Probot's `auth(installationId)`). */
  githubFor(installationId: number): Promise<GitHubClient>;
  /** Base of the bot's run pages (check runs' details_url). */
  publicUrl: string;
}

/**
 * Tells a PR run's check run what the stored record says: creates it on first use, updates it
 * after. Two processes may publish the same run at once (an abort while progress is reported); each
 * re-reads the record after writing and publishes again if it changed, so the last write GitHub
 * sees is always the newest state and a concluded run never appears to be running again.
 */
export function createCheckRunPublisher(deps: CheckRunPublisherDeps): PublishRun {
  const { store, budgets, publicUrl } = deps;
  return async (stored) => {
    if (!isPrRun(stored)) return stored;
    const octokit = await deps.githubFor(stored.subject.installationId);
    const budget = budgets(stored.subject.installationId);
    for (;;) {
      const run = await store.get(stored.id);
      if (!run || !isPrRun(run)) return run;
      const { owner, repo, checkRunId } = run.subject;
      const view = checkRunView(run, { publicUrl });
      let published: RunRecord = run;
      try {
        if (checkRunId === undefined) {
          const { data } = await githubWrite(budget, () =>
            octokit.rest.checks.create({ owner, repo, ...view }),
          );
          published = (await store.setCheckRunId(run.id, data.id)) ?? run;
        } else {
          const { head_sha: _, ...update } = view;
          await githubWrite(budget, () =>
            octokit.rest.checks.update({ owner, repo, check_run_id: checkRunId, ...update }),
          );
        }
      } catch (error) {
        // A stale update GitHub refused is fine when a newer state is waiting to be written.
        if ((await store.get(run.id))?.revision === run.revision) throw error;
        continue;
      }
      const latest = await store.get(run.id);
      if (!latest || latest.revision === published.revision) return latest ?? published;
    }
  };
}
