import type { GitHubClient } from "../trust/github-client.ts";
import { checkRunView } from "./check-run-view.ts";
import { githubWrite } from "./github-write.ts";
import type { GitHubWriteBudget } from "./github-write-budget.ts";
import type { RunRecord } from "./run-record.ts";
import type { RunStore } from "./run-store.ts";

export interface CheckRunPublisher {
  octokit: GitHubClient;
  budget: GitHubWriteBudget;
  store: RunStore;
  publicUrl: string;
}

/**
 * Makes the run's check run say what the stored record says: creates it on first use, updates it
 * after. Two processes may publish the same run at once (an abort while progress is reported); each
 * re-reads the record after writing and publishes again if it changed, so the last write GitHub
 * sees is always the newest state and a concluded run never appears to be running again.
 */
export async function publishCheckRun(
  publisher: CheckRunPublisher,
  runId: string,
): Promise<RunRecord | undefined> {
  const { octokit, budget, store, publicUrl } = publisher;
  for (;;) {
    const run = await store.get(runId);
    if (!run) return undefined;
    const view = checkRunView(run, { publicUrl });
    let published = run;
    try {
      if (run.checkRunId === undefined) {
        const { data } = await githubWrite(budget, () =>
          octokit.rest.checks.create({ owner: run.owner, repo: run.repo, ...view }),
        );
        published = (await store.setCheckRunId(run.id, data.id)) ?? run;
      } else {
        const { head_sha: _, ...update } = view;
        await githubWrite(budget, () =>
          octokit.rest.checks.update({
            owner: run.owner,
            repo: run.repo,
            check_run_id: run.checkRunId!,
            ...update,
          }),
        );
      }
    } catch (error) {
      // A stale update GitHub refused is fine when a newer state is waiting to be written.
      if ((await store.get(runId))?.revision === run.revision) throw error;
      continue;
    }
    const latest = await store.get(runId);
    if (!latest || latest.revision === published.revision) return latest ?? published;
  }
}
