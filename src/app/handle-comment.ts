import { ARCHES, type Arch } from "@netstress/core/arch/arch.ts";
import type { Command, CommandLimits } from "../commands/command.ts";
import { parseComment } from "../commands/parse-comment.ts";
import { renderCommandErrors } from "../commands/render-command-errors.ts";
import { renderHelp } from "../commands/render-help.ts";
import { fetchRepoConfig } from "../config/fetch-repo-config.ts";
import type { RepoConfigResult } from "../config/load-repo-config.ts";
import { DEFAULT_CLUSTERS_PER_ARM } from "../config/cluster-count.ts";
import { DEFAULT_REPO_CONFIG } from "../config/repo-config.ts";
import { runSourceFor } from "../config/run-source.ts";
import { abortRun } from "../queue/abort-run.ts";
import { githubWrite } from "../github/github-write.ts";
import { latestRunsByArch } from "./latest-runs.ts";
import { isActive, type PrRun, type PrSubject } from "../runs/run-record.ts";
import { runIterations } from "../runs/run-iterations.ts";
import { authorizeActor, authorizeOnPullRequest, OK_TO_TEST_LABEL } from "../trust/authorize-actor.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import { untrustedReply } from "../trust/untrusted-reply.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";
import type { IntakeEvent } from "./intake-event.ts";
import { postComment } from "./post-comment.ts";
import { QuotaExceeded } from "./quota-exceeded.ts";
import { reportConfigProblems } from "./report-config-problems.ts";
import { rerunRuns } from "./rerun-runs.ts";
import { startAutomaticRuns } from "./start-automatic-runs.ts";
import { alreadyRunningReply, startStressRuns, type StressRun } from "./start-stress-runs.ts";

type CommentEvent = Extract<IntakeEvent, { kind: "comment" }>;

interface CommentContext {
  deps: IntakeDeps;
  octokit: GitHubClient;
  event: CommentEvent;
  target: PullRequestTarget;
  config: RepoConfigResult;
  pull: { headSha: string; author: string; labels: string[]; draft: boolean };
  runs: PrRun[];
  replies: string[];
}

/**
 * A PR comment: every command in it, in order, answered by at most one reply comment (errors,
 * help, pointers to identical active runs and refusals are gathered), so a busy PR costs few writes.
 */
export async function handleComment(deps: IntakeDeps, event: CommentEvent): Promise<void> {
  const octokit = await deps.githubFor(event.installationId);
  const config = await fetchRepoConfig(octokit, event.owner.login, event.repo);
  const repoConfig = config.kind === "invalid" ? DEFAULT_REPO_CONFIG : config.config;
  // arch= may name only the arches the repository is configured for (the error message lists them).
  const limits: CommandLimits = {
    arches: ARCHES.filter((arch) => repoConfig.arches.includes(arch)),
    maxIterations: repoConfig.limits.max_iterations,
    maxMore: repoConfig.limits.max_more,
    releases: deps.releases,
  };
  const parsed = parseComment(event.body, limits);
  const { errors } = parsed;
  // The same command twice in one comment is one request (ten identical lines start one run each arch).
  const commands = uniqueCommands(parsed.commands);
  if (commands.length === 0 && errors.length === 0) return;
  const target: PullRequestTarget = {
    installationId: event.installationId,
    owner: event.owner,
    repo: event.repo,
    pr: event.pr,
    privateRepository: event.privateRepository,
  };
  const { data: pull } = await octokit.rest.pulls.get({
    owner: event.owner.login,
    repo: event.repo,
    pull_number: event.pr,
  });
  const context: CommentContext = {
    deps,
    octokit,
    event,
    target,
    config,
    pull: {
      headSha: pull.head.sha,
      author: pull.user.login,
      labels: pull.labels.map((l) => l.name),
      draft: pull.draft ?? false,
    },
    runs: await deps.store.listForPullRequest(event.owner.login, event.repo, event.pr),
    replies: [],
  };

  const needsTrust = errors.length > 0 || commands.some((c) => c.kind !== "help");
  const authorization = needsTrust
    ? await authorizeOnPullRequest({
        octokit,
        owner: event.owner,
        repo: event.repo,
        actor: event.sender,
        trustedApps: deps.trustedApps,
        pullRequest: { author: context.pull.author, headSha: context.pull.headSha },
        approval: await deps.store.approvalOf({ owner: event.owner.login, repo: event.repo, pr: event.pr }),
        approvePushes: repoConfig.approve_pushes,
      })
    : { trusted: false as const };
  if (needsTrust && !authorization.trusted) {
    // Anyone can comment on a public PR: the refusal is said once per PR, then commands are ignored.
    if (
      await deps.store.claimPullRequestReply({
        owner: event.owner.login,
        repo: event.repo,
        pr: event.pr,
        kind: "untrusted",
      })
    ) {
      context.replies.push(
        untrustedReply({
          login: event.sender.login,
          owner: event.owner.login,
          isAuthor: event.sender.login === context.pull.author,
        }),
      );
    } else {
      deps.log.info(
        { deliveryId: event.deliveryId, sender: event.sender.login },
        "untrusted command ignored; the PR was told once",
      );
    }
  } else if (errors.length > 0) {
    context.replies.push(renderCommandErrors(errors));
  }
  const closed = pull.state !== "open";
  for (const command of commands) {
    if (command.kind === "help") context.replies.push(renderHelp(limits));
    else if (!authorization.trusted) continue;
    else if (closed)
      context.replies.push(`This pull request is ${pull.state}: \`${command.text}\` did nothing.`);
    else {
      try {
        await runCommand(context, command, authorization.via === "ok-to-test");
      } catch (error) {
        if (!(error instanceof QuotaExceeded)) throw error;
        context.replies.push(`\`${command.text}\` did not start: ${error.message}`);
      }
    }
  }
  if (context.replies.length > 0)
    await postComment(deps, octokit, target, context.replies.join("\n\n---\n\n"));
}

async function runCommand(
  context: CommentContext,
  command: Command,
  approvedAuthorOnly: boolean,
): Promise<void> {
  const { deps, event, target, pull } = context;
  const trigger = (kind: PrSubject["trigger"]["kind"]) => ({
    kind,
    actor: event.sender.login,
    deliveryId: event.deliveryId,
  });
  const slot = `line-${command.line}`;
  switch (command.kind) {
    case "stress": {
      const source = runSourceFor(context.config, deps.defaults);
      if (!source.ok) {
        await reportConfigProblems(deps, context.octokit, target, pull.headSha, source.problems);
        context.replies.push(
          `\`${command.text}\` did not run: the repository configuration cannot be used (see the check run).`,
        );
        return;
      }
      const config = context.config.kind === "invalid" ? DEFAULT_REPO_CONFIG : context.config.config;
      const focus = command.options.focus ?? config.focus;
      const suite = command.options.suite ?? config.suite;
      const upgradeFrom = command.options.upgradeFrom ?? config.upgrade_from;
      const iterations = command.options.iterations ?? config.iterations;
      const results = await startStressRuns(deps, {
        target,
        headSha: pull.headSha,
        arches: command.options.arches ?? config.arches,
        options: {
          iterations: runIterations({ iterations, upgradeFrom, clusters: config.clusters }),
          baseline: command.options.baseline ?? config.baseline,
          ...(focus ? { focus } : {}),
          ...(suite ? { suite } : {}),
          ...(config.disruptive || upgradeFrom ? { includeDisruptive: true } : {}),
          ...(upgradeFrom ? { upgradeFrom } : {}),
        },
        source: source.source,
        trigger: trigger("comment"),
        slot,
        ...(config.limits.max_run_size ? { maxRunSize: config.limits.max_run_size } : {}),
      });
      pointToActiveTwins(context, command.text, results);
      return;
    }
    case "more": {
      const repoLimits = (context.config.kind === "invalid" ? DEFAULT_REPO_CONFIG : context.config.config)
        .limits;
      const latest = latestRunsByArch(context.runs, pull.headSha);
      const busy = [...latest.values()].filter(isActive);
      const parents = [...latest.values()].filter((r) => hasResults(r));
      if (parents.length === 0) {
        context.replies.push(
          busy.length > 0
            ? `\`${command.text}\`: the runs of \`${pull.headSha.slice(0, 12)}\` are still going; add iterations once they finish.`
            : `\`${command.text}\`: there is no finished run of \`${pull.headSha.slice(0, 12)}\` to add iterations to.`,
        );
        return;
      }
      for (const parent of parents) {
        const results = await startStressRuns(deps, {
          target,
          headSha: pull.headSha,
          arches: [parent.arch],
          options: {
            ...parent.options,
            // The new iterations run on new clusters, which an upgrade run upgrades once each.
            iterations: runIterations({
              iterations: command.iterations,
              upgradeFrom: parent.options.upgradeFrom,
              clusters: parent.source.clusters ?? DEFAULT_CLUSTERS_PER_ARM,
            }),
          },
          source: parent.source,
          trigger: trigger("more"),
          slot,
          parents: new Map<Arch, PrRun>([[parent.arch, parent]]),
          ...(repoLimits.max_run_size ? { maxRunSize: repoLimits.max_run_size } : {}),
        });
        pointToActiveTwins(context, command.text, results);
      }
      return;
    }
    case "abort": {
      const active = context.runs.filter(isActive);
      for (const run of active) await abortRun(deps, run.id, `aborted by @${event.sender.login}`);
      if (active.length === 0)
        context.replies.push(`\`${command.text}\`: no network-stress run of this PR is active.`);
      return;
    }
    case "retest": {
      const failed = [...latestRunsByArch(context.runs, pull.headSha).values()].filter(
        (r) =>
          r.conclusion === "failure" || r.conclusion === "timed_out" || r.conclusion === "action_required",
      );
      if (failed.length === 0) {
        context.replies.push(
          `\`/retest\`: no failed or errored network-stress run of \`${pull.headSha.slice(0, 12)}\`.`,
        );
        return;
      }
      await rerunRuns(deps, context.octokit, {
        target,
        runs: failed,
        config: context.config,
        trigger: trigger("retest"),
        slot,
      });
      return;
    }
    case "ok-to-test":
      await approve(context, approvedAuthorOnly);
      return;
  }
}

/**
 * /ok-to-test: only someone trusted in their own right approves. The approval is recorded with the
 * approver and the head they approved (the label only shows it); then the automatic runs start.
 */
async function approve(context: CommentContext, approvedAuthorOnly: boolean): Promise<void> {
  const { deps, octokit, event, target, pull } = context;
  const trusted =
    !approvedAuthorOnly &&
    (
      await authorizeActor({
        octokit,
        owner: event.owner,
        repo: event.repo,
        actor: event.sender,
        trustedApps: deps.trustedApps,
      })
    ).trusted;
  if (!trusted) {
    context.replies.push(
      "`/ok-to-test` is for members of the organization and collaborators with write access.",
    );
    return;
  }
  await deps.store.recordApproval({
    owner: event.owner.login,
    repo: event.repo,
    pr: event.pr,
    approval: { approver: event.sender.login, headSha: pull.headSha, at: new Date().toISOString() },
  });
  if (!pull.labels.includes(OK_TO_TEST_LABEL)) {
    await githubWrite(deps.budgets(event.installationId), () =>
      octokit.rest.issues.addLabels({
        owner: event.owner.login,
        repo: event.repo,
        issue_number: event.pr,
        labels: [OK_TO_TEST_LABEL],
      }),
    );
  }
  const started = await startAutomaticRuns(deps, octokit, {
    target,
    headSha: pull.headSha,
    draft: pull.draft,
    config: context.config,
    trigger: { kind: "ok-to-test", actor: event.sender.login, deliveryId: event.deliveryId },
  });
  if (started.length === 0) {
    context.replies.push(
      `Approved: @${pull.author} and trusted users can now start runs with \`/test network-stress\`.`,
    );
  }
}

function uniqueCommands(commands: readonly Command[]): Command[] {
  const seen = new Set<string>();
  return commands.filter((command) => {
    const { line: _line, text: _text, ...request } = command;
    const key = JSON.stringify(request);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function hasResults(run: PrRun): boolean {
  return run.conclusion === "success" || run.conclusion === "failure" || run.conclusion === "neutral";
}

function pointToActiveTwins(context: CommentContext, text: string, results: readonly StressRun[]): void {
  const twins = results.filter((r) => r.twin).map((r) => r.run);
  if (twins.length > 0) context.replies.push(alreadyRunningReply(text, twins, context.deps.publicUrl));
}
