import type { Arch } from "@netstress/core/arch/arch.ts";
import { fetchRepoConfig } from "../config/fetch-repo-config.ts";
import { CHECK_RUN_ACTIONS, MORE_ITERATIONS } from "../github/check-run-view.ts";
import { abortRun } from "../queue/abort-run.ts";
import { latestRunsByArch } from "./latest-runs.ts";
import { isPrRun, type PrRun, type PrSubject } from "../runs/run-record.ts";
import { authorizeActor } from "../trust/authorize-actor.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import type { IntakeEvent } from "./intake-event.ts";
import { rerunRuns } from "./rerun-runs.ts";
import { startStressRuns } from "./start-stress-runs.ts";

type CheckEvent = Extract<IntakeEvent, { kind: "check_run" | "check_suite" }>;

/**
 * The check run's buttons (Abort, Re-run, Run 10 more or, for an adaptive run, Run until decided),
 * "Re-run" of one check run and "Re-run all
 * checks" of the suite. GitHub shows the buttons to people with write access; the sender is still
 * authorized like any trigger.
 */
export async function handleCheckEvent(deps: IntakeDeps, event: CheckEvent): Promise<void> {
  const octokit = await deps.githubFor(event.installationId);
  const authorization = await authorizeActor({
    octokit,
    owner: event.owner,
    repo: event.repo,
    actor: event.sender,
    trustedApps: deps.trustedApps,
  });
  if (!authorization.trusted) {
    deps.log.info(
      { deliveryId: event.deliveryId, sender: event.sender.login },
      "check action by an untrusted user ignored",
    );
    return;
  }
  const trigger = (kind: PrSubject["trigger"]["kind"]) => ({
    kind,
    actor: event.sender.login,
    deliveryId: event.deliveryId,
  });

  let runs: PrRun[];
  if (event.kind === "check_run") {
    const run = await deps.store.get(event.runId);
    if (!run || !isPrRun(run) || run.subject.owner !== event.owner.login || run.subject.repo !== event.repo)
      return;
    if (event.identifier === CHECK_RUN_ACTIONS.abort.identifier) {
      await abortRun(deps, run.id, `aborted by @${event.sender.login}`);
      return;
    }
    if (!(await isPullRequestAt(octokit, run.subject))) {
      deps.log.info({ runId: run.id }, "button on a closed pull request or an old commit ignored");
      return;
    }
    const { more, continue: further } = CHECK_RUN_ACTIONS;
    if (event.identifier === more.identifier || event.identifier === further.identifier) {
      // "Run until decided": the same request with another budget, going on from the run's batches.
      const adaptive = event.identifier === further.identifier;
      if (adaptive !== (run.adaptive?.decision !== undefined)) return;
      await startStressRuns(deps, {
        target: targetOf(event, run),
        headSha: run.subject.headSha,
        arches: [run.arch],
        options: adaptive ? run.options : { ...run.options, iterations: MORE_ITERATIONS },
        source: run.source,
        trigger: trigger("more"),
        slot: "button-more",
        parents: new Map<Arch, PrRun>([[run.arch, run]]),
      });
      return;
    }
    runs = [run];
  } else {
    // "Re-run all checks": the latest run of every arch of that commit, in the open PRs it heads.
    runs = [];
    for (const [pr, prRuns] of await runsOfCommit(deps, event)) {
      const target = { owner: event.owner.login, repo: event.repo, pr, headSha: event.headSha };
      if (await isPullRequestAt(octokit, target))
        runs.push(...latestRunsByArch(prRuns, event.headSha).values());
    }
  }
  const config = await fetchRepoConfig(octokit, event.owner.login, event.repo);
  for (const run of runs) {
    await rerunRuns(deps, octokit, {
      target: targetOf(event, run),
      runs: [run],
      config,
      trigger: trigger("rerun"),
      slot: `rerun-${run.id}`,
    });
  }
}

function targetOf(event: CheckEvent, run: PrRun): PullRequestTarget {
  return {
    installationId: event.installationId,
    owner: event.owner,
    repo: event.repo,
    pr: run.subject.pr,
    privateRepository: event.privateRepository,
  };
}

/**
 * The runs of a commit, by PR. GitHub leaves check_suite.pull_requests empty when the head is a
 * fork's, so the bot's own index of runs by commit answers then.
 */
async function runsOfCommit(
  deps: IntakeDeps,
  event: Extract<CheckEvent, { kind: "check_suite" }>,
): Promise<Map<number, PrRun[]>> {
  const { owner, repo } = event;
  const runs =
    event.prs.length > 0
      ? (
          await Promise.all(event.prs.map((pr) => deps.store.listForPullRequest(owner.login, repo, pr)))
        ).flat()
      : await deps.store.listForCommit(owner.login, repo, event.headSha);
  const byPr = new Map<number, PrRun[]>();
  for (const run of runs) byPr.set(run.subject.pr, [...(byPr.get(run.subject.pr) ?? []), run]);
  return byPr;
}

/** Whether a PR is still open at this commit: runs of older commits, or of closed PRs, are not re-run. */
async function isPullRequestAt(
  octokit: GitHubClient,
  { owner, repo, pr, headSha }: { owner: string; repo: string; pr: number; headSha: string },
): Promise<boolean> {
  const { data } = await octokit.rest.pulls.get({ owner, repo, pull_number: pr });
  return data.state === "open" && data.head.sha === headSha;
}
