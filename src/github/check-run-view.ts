import type { Arch } from "@netstress/core/arch/arch.ts";
import type { CheckRunOutput } from "../report/check-run-output.ts";
import { clustersTable, provisioningLines } from "../runs/describe-clusters.ts";
import { powerLine } from "../runs/power-line.ts";
import type { PrRun, RunRecord } from "../runs/run-record.ts";
import { upgradingPhase, type UpgradingPhase } from "../runs/upgrading-phase.ts";

export const CHECK_RUN_PREFIX = "network-stress";
/** GitHub's limit on a check run's summary and text. */
export const OUTPUT_LIMIT = 65_535;

export const CHECK_RUN_ACTIONS = {
  abort: { label: "Abort", description: "Stop this run now", identifier: "abort" },
  rerun: { label: "Re-run", description: "Run again with the same options", identifier: "rerun" },
  more: { label: "Run 10 more", description: "Add 10 iterations to these results", identifier: "more" },
  /** An adaptive run that spent its budget undecided: another budget, on the undecided tests. GitHub caps labels at 20 characters. */
  continue: {
    label: "Run until decided",
    description: "Another budget on the undecided tests",
    identifier: "continue",
  },
} as const;
export type CheckRunAction = keyof typeof CHECK_RUN_ACTIONS;
export const MORE_ITERATIONS = 10;

export function checkRunName(arch: Arch): string {
  return `${CHECK_RUN_PREFIX} (${arch})`;
}

export interface CheckRunRequest {
  name: string;
  head_sha: string;
  external_id: string;
  details_url: string;
  status: "queued" | "in_progress" | "completed";
  conclusion?: NonNullable<RunRecord["conclusion"]>;
  started_at?: string;
  completed_at?: string;
  output: CheckRunOutput;
  actions: (typeof CHECK_RUN_ACTIONS)[CheckRunAction][];
}

/** What a run's check run should say right now: a pure view of the run record. */
export function checkRunView(run: PrRun, options: { publicUrl: string }): CheckRunRequest {
  const common = {
    name: checkRunName(run.arch),
    head_sha: run.subject.headSha,
    external_id: run.id,
    details_url: `${options.publicUrl}/runs/${run.id}`,
    ...(run.startedAt ? { started_at: run.startedAt } : {}),
  };
  const { abort, rerun, more } = CHECK_RUN_ACTIONS;
  // An adaptive run goes on with its undecided tests, only while some are left; a fixed one adds iterations.
  const further = run.adaptive?.decision
    ? run.adaptive.decision.stopped === "budget spent"
      ? [CHECK_RUN_ACTIONS.continue]
      : []
    : [more];
  switch (run.state) {
    case "queued":
      return {
        ...common,
        status: "queued",
        output: {
          title: `Queued — ${describeRequest(run)}`,
          summary: [requestTable(run), powerParagraph(run), planTable(run)].filter(Boolean).join("\n\n"),
        },
        actions: [abort],
      };
    case "waiting-for-images": {
      const wait = run.imageWait!;
      return {
        ...common,
        status: "queued",
        output: {
          title: `Waiting for PR images (${run.arch})`,
          summary: [
            `The PR's images are not published yet; the run starts when they are.`,
            "",
            ...wait.missing.map((image) => `- \`${image}\``),
            "",
            `Checked ${wait.attempts} time(s) since ${wait.since}; next check ${wait.next}; ` +
              `gives up ${run.source.imageWaitMinutes} minutes after the first check.`,
            "",
            requestTable(run),
          ].join("\n"),
        },
        actions: [abort],
      };
    }
    case "running":
    case "analyzing": {
      const p = run.progress;
      // What the run waits for before it executes: a crossover batch's upgrades, new clusters.
      const upgrading = upgradingPhase(run);
      const provisioning = run.state === "running" ? provisioningLines(run) : [];
      const clustersOnTheirWay = [...(upgrading ? [upgrading.line] : []), ...provisioning];
      const title =
        run.state === "analyzing"
          ? `Analyzing results (${run.arch})`
          : clustersOnTheirWay.length > 0
            ? `Provisioning — ${clustersOnTheirWay.join("; ")}`
            : p
              ? `Running — ${batchProgress(run)}${p.done}/${p.total} executions, ${p.failed} failed (${run.arch})`
              : run.adaptive?.batches.length
                ? `Running — ${batchProgress(run)}starting (${run.arch})`
                : `Running — preparing binaries (${run.arch})`;
      const waiting = [...(upgrading ? [upgradingDetail(upgrading)] : []), ...provisioning]
        .map((line) => `- ${line}`)
        .join("\n");
      return {
        ...common,
        status: "in_progress",
        output: {
          title: title.length > 100 ? `${title.slice(0, 99)}…` : title,
          summary: [waiting, requestTable(run), powerParagraph(run), planTable(run), clustersTable(run)]
            .filter(Boolean)
            .join("\n\n"),
        },
        actions: [abort],
      };
    }
    case "completed":
      return {
        ...common,
        status: "completed",
        conclusion: run.conclusion ?? "failure",
        completed_at: run.finishedAt ?? run.updatedAt,
        output: fitOutput(withClusters(run, run.output ?? reasonOutput(run))),
        actions:
          run.conclusion === "success" || run.conclusion === "failure" || run.conclusion === "neutral"
            ? [rerun, ...further]
            : [rerun],
      };
  }
}

/** A crossover batch's upgrades with the payload they move to and each cluster as far as it got. */
function upgradingDetail(upgrading: UpgradingPhase): string {
  const clusters = upgrading.clusters.map((c) => `\`${c.id}\` ${c.state}`).join(", ");
  return `${upgrading.line} — ${upgrading.payload ? `\`${upgrading.payload}\`: ` : ""}${clusters}`;
}

/** Where an adaptive run is: its batch, and the tests it still runs. */
function batchProgress(run: PrRun): string {
  const batches = run.adaptive?.batches ?? [];
  const batch = batches.at(-1);
  if (!batch) return "";
  const undecided = batch.tests ? `${batch.tests.length} undecided test(s)` : "every test";
  return `batch ${batches.length}, ${undecided}: `;
}

function reasonOutput(run: PrRun): CheckRunOutput {
  const heading: Record<string, string> = {
    cancelled: "Cancelled",
    timed_out: "Timed out",
    action_required: "Action required",
    failure: "Failed",
  };
  const reason = run.reason ?? "the run ended without a result";
  const title = `${heading[run.conclusion ?? "failure"] ?? "Finished"} — ${reason}`;
  return {
    title: title.length > 100 ? `${title.slice(0, 99)}…` : title,
    summary: [`**${reason}**`, "", requestTable(run), planTable(run)].filter(Boolean).join("\n"),
  };
}

/** The clusters the run held and the cluster-hours it spent, under whatever the output says. */
function withClusters(run: PrRun, output: CheckRunOutput): CheckRunOutput {
  const table = clustersTable(run);
  return table ? { ...output, summary: `${output.summary}\n\n${table}` } : output;
}

function fitOutput(output: CheckRunOutput): CheckRunOutput {
  const cut = (text: string) =>
    text.length <= OUTPUT_LIMIT ? text : `${text.slice(0, OUTPUT_LIMIT - 40)}\n… (cut; see the full report)`;
  return {
    title: output.title,
    summary: cut(output.summary),
    ...(output.text !== undefined ? { text: cut(output.text) } : {}),
  };
}

function describeRequest(run: RunRecord): string {
  const against = { payload: "vs released payload", history: "vs history", none: "PR only" }[
    run.options.baseline
  ];
  return `${run.options.iterations} iterations, ${against} (${run.arch})`;
}

function requestTable(run: PrRun): string {
  const rows: [string, string][] = [
    ["commit", `\`${run.subject.headSha.slice(0, 12)}\``],
    ["triggered by", `${run.subject.trigger.actor} (${run.subject.trigger.kind})`],
    run.source.adaptive
      ? [
          "mode",
          `adaptive: until every test is decided at ${run.source.adaptive.target.from}:${run.source.adaptive.target.to}, at most the executions of ${run.source.adaptive.budgetIterations} iterations`,
        ]
      : ["iterations", String(run.options.iterations)],
    ["baseline", run.options.baseline],
  ];
  if (run.options.focus) rows.push(["focus", `\`${run.options.focus.replace(/`/g, "'")}\``]);
  if (run.options.suite) rows.push(["suite", `\`${run.options.suite.replace(/`/g, "'")}\``]);
  if (run.options.includeDisruptive) rows.push(["disruptive tests", "included (each runs alone)"]);
  if (run.options.upgradeFrom)
    rows.push(["upgrade run from", `\`${run.options.upgradeFrom.replace(/`/g, "'")}\``]);
  if (run.firstIteration > 0) rows.push(["earlier iterations included", String(run.firstIteration)]);
  const payload = run.source.payload ?? run.source.releaseStream;
  if (payload) rows.push(["payload", `\`${payload}\``]);
  return ["| | |", "| --- | --- |", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join("\n");
}

/** What the run's design can see and what its target needs, once the resolve stage planned it. */
function powerParagraph(run: RunRecord): string {
  return run.power ? `**Power** — ${powerLine(run.power)}` : "";
}

function planTable(run: RunRecord): string {
  if (!run.plan) return "";
  const rows = run.plan.arms.flatMap((arm) =>
    arm.components.map(
      (c) =>
        `| ${arm.arm} | ${c.component} | ${c.source ?? ""} | ${c.image ? `\`${c.image}\`` : ""} | ${c.commit ? `\`${c.commit.slice(0, 12)}\`` : ""} |`,
    ),
  );
  return [
    "**Plan**",
    "",
    "| arm | component | binary from | image | commit |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
