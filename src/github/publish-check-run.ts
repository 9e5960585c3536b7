import type { PublishRun } from "../runs/run-publisher.ts";
import { isPrRun, type RunRecord } from "../runs/run-record.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { Logger } from "pino";
import {
  ANNOTATIONS_PER_REQUEST,
  checkRunAnnotations,
  type CheckRunAnnotation,
} from "./check-run-annotations.ts";
import { checkRunView, type CheckRunRequest } from "./check-run-view.ts";
import { githubWrite } from "./github-write.ts";
import type { GitHubWriteBudgets } from "./github-write-budget.ts";

export interface CheckRunPublisherDeps {
  store: {
    setCheckRunId(id: string, checkRunId: number): Promise<RunRecord | undefined>;
  };
  budgets: GitHubWriteBudgets;
  /** An installation's client (Probot's `auth(installationId)`). */
  githubFor(installationId: number): Promise<GitHubClient>;
  /** Base of the bot's run pages (check runs' details_url). */
  publicUrl: string;
  /** Claims a check run's annotations for one publisher, once (see createRedisClaims). */
  claimAnnotations(checkRunId: string): Promise<boolean>;
  log: Logger;
}

/**
 * Tells a PR run's check run what the record it is handed says: creates the check run on first use
 * (storing its id on the run), updates it after. It reads nothing: that a newer state is waiting
 * (two processes publishing one run at once) is the durable publisher's to notice. Returns the run
 * as stored afterwards.
 */
export function createCheckRunPublisher(deps: CheckRunPublisherDeps): PublishRun {
  const { store, budgets, publicUrl } = deps;
  return async (run) => {
    if (!isPrRun(run)) return run;
    const octokit = await deps.githubFor(run.subject.installationId);
    const budget = budgets(run.subject.installationId);
    const { owner, repo, checkRunId } = run.subject;
    const view = checkRunView(run, { publicUrl });
    let published: RunRecord = run;
    let publishedId = checkRunId;
    if (checkRunId === undefined) {
      const { data } = await githubWrite(budget, () => octokit.rest.checks.create({ owner, repo, ...view }));
      published = (await store.setCheckRunId(run.id, data.id)) ?? run;
      publishedId = data.id;
    } else {
      const { head_sha: _, ...update } = view;
      await githubWrite(budget, () =>
        octokit.rest.checks.update({ owner, repo, check_run_id: checkRunId, ...update }),
      );
    }
    const annotations =
      run.state === "completed"
        ? checkRunAnnotations(run.output?.locatedFailures ?? [], { owner, repo })
        : [];
    if (annotations.length > 0 && (await deps.claimAnnotations(String(publishedId)))) {
      await annotate({ owner, repo, checkRunId: publishedId!, annotations, output: view.output });
    }
    return published;

    /**
     * Sends the annotations in batches of GitHub's 50 per request, with the output they belong
     * to. Annotations help; they never hold back the check run's state, so a refusal is logged.
     */
    async function annotate(options: {
      owner: string;
      repo: string;
      checkRunId: number;
      annotations: CheckRunAnnotation[];
      output: CheckRunRequest["output"];
    }): Promise<void> {
      const { owner, repo, checkRunId } = options;
      const { title, summary } = options.output;
      try {
        for (let start = 0; start < options.annotations.length; start += ANNOTATIONS_PER_REQUEST) {
          const batch = options.annotations.slice(start, start + ANNOTATIONS_PER_REQUEST);
          await githubWrite(budget, () =>
            octokit.rest.checks.update({
              owner,
              repo,
              check_run_id: checkRunId,
              output: { title, summary, annotations: batch },
            }),
          );
        }
      } catch (error) {
        deps.log.warn({ err: error, runId: run.id, checkRunId }, "check run annotations not sent");
      }
    }
  };
}
