import { createHash, createHmac } from "node:crypto";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { RunSource } from "../config/run-source.ts";
import { acceptRun, type AcceptedRun } from "../queue/accept-run.ts";
import { queuedRun } from "../runs/queued-run.ts";
import { runClusters } from "../runs/run-clusters.ts";
import type { PrRun, PrSubject } from "../runs/run-record.ts";
import { QuotaExceeded } from "./quota-exceeded.ts";
import { quotaProblem } from "./quota-problem.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";

/** An accepted PR run. */
export type StressRun = AcceptedRun & { run: PrRun };

export interface StressRunsRequest {
  target: PullRequestTarget;
  headSha: string;
  arches: readonly Arch[];
  options: PrRun["options"];
  source: RunSource;
  trigger: PrSubject["trigger"];
  /** Tells several runs of one delivery apart (command line, button …); part of the run id. */
  slot: string;
  /** Per arch: the finished run this one extends (`more`). */
  parents?: ReadonlyMap<Arch, PrRun>;
  /** The repository's own cap on iterations × arches × clusters (limits.max_run_size). */
  maxRunSize?: number;
}

/**
 * One accepted run per arch (see AcceptedRun: `twin` when an identical active run stands instead). Run
 * ids derive from the delivery, slot and arch with a secret, so a retried intake finds the runs it
 * already made, and nobody can guess another run's page address. A request that would take the
 * PR, repository or installation past its quota of active runs, or is too large, starts nothing
 * and throws QuotaExceeded with what is running.
 */
export async function startStressRuns(deps: IntakeDeps, request: StressRunsRequest): Promise<StressRun[]> {
  return deps.store.withAdmission(request.target.installationId, () => admit(deps, request));
}

async function admit(deps: IntakeDeps, request: StressRunsRequest): Promise<StressRun[]> {
  const at = new Date();
  const records = request.arches.map((arch) => prRunRecord(deps.runIdSecret, request, arch, at));
  const active = await deps.store.listActiveOfInstallation(request.target.installationId);
  const twins = new Set(active.map((r) => r.dedupeKey));
  // Runs of this request made by an earlier attempt of the same intake count as made, not as new.
  const made = new Set(active.map((r) => r.id));
  const fresh = records.filter((r) => !twins.has(r.dedupeKey) && !made.has(r.id));
  const problem = quotaProblem({
    quotas: {
      ...deps.quotas,
      requestIterations: Math.min(deps.quotas.requestIterations, request.maxRunSize ?? Infinity),
    },
    active,
    target: {
      installationId: request.target.installationId,
      owner: request.target.owner.login,
      repo: request.target.repo,
      pr: request.target.pr,
    },
    newRuns: fresh.length,
    iterations: request.options.iterations,
    clusters: 1,
    ...(records[0] ? { runClusters: runClusters(records[0]) } : {}),
    publicUrl: deps.publicUrl,
  });
  if (fresh.length > 0 && problem) throw new QuotaExceeded(problem);
  const results = [];
  for (const record of records) {
    const accepted = await acceptRun(deps, record);
    results.push({ ...accepted, run: accepted.run as PrRun });
  }
  return results;
}

function prRunRecord(secret: string, request: StressRunsRequest, arch: Arch, at: Date): PrRun {
  const { target, trigger, slot } = request;
  const parent = request.parents?.get(arch);
  const id = createHmac("sha256", secret)
    .update(`${trigger.deliveryId}\0${slot}\0${arch}`)
    .digest("hex")
    .slice(0, 32);
  return queuedRun<PrRun>(
    {
      id,
      subject: {
        kind: "pr",
        installationId: target.installationId,
        owner: target.owner.login,
        repo: target.repo,
        pr: target.pr,
        headSha: request.headSha,
        trigger,
        requestId: `${trigger.deliveryId}/${slot}`,
        ...(target.privateRepository ? { privateRepository: true } : {}),
        ...(parent ? { parentRunId: parent.id } : {}),
      },
      arch,
      options: request.options,
      source: request.source,
      dedupeKey: dedupeKey(request, arch, parent),
      // More iterations of the same binaries, on clusters of the same payloads.
      ...(parent ? { plan: parent.plan, ...(parent.payloads ? { payloads: parent.payloads } : {}) } : {}),
      // An adaptive run goes on from its parent's batches and decisions, with a budget of its own.
      ...(parent?.adaptive
        ? {
            adaptive: {
              design: parent.adaptive.design,
              batches: parent.adaptive.batches,
              ...(parent.adaptive.decision ? { decision: parent.adaptive.decision } : {}),
            },
          }
        : {}),
      firstIteration: parent ? nextIteration(parent) : 0,
      results: parent?.results ?? [],
    },
    at,
  );
}

/** The first iteration after a run's own: after its last batch, for an adaptive run. */
function nextIteration(run: PrRun): number {
  return (run.adaptive?.batches ?? []).reduce(
    (end, batch) => Math.max(end, batch.first + batch.count),
    run.firstIteration + (run.adaptive ? 0 : run.options.iterations),
  );
}

/** Same PR, commit, arch and options (and parent, for `more`): while one such run is active, it is the run. */
function dedupeKey(request: StressRunsRequest, arch: Arch, parent: PrRun | undefined): string {
  const {
    iterations,
    baseline,
    focus = "",
    suite = "",
    includeDisruptive = false,
    upgradeFrom,
  } = request.options;
  const more = parent ? `more:${parent.id}` : "fresh";
  const { target } = request;
  return createHash("sha256")
    .update(
      JSON.stringify([
        target.owner.login,
        target.repo,
        target.pr,
        request.headSha,
        arch,
        iterations,
        baseline,
        focus,
        more,
        // Appended only when set, so the keys of runs without them stay what they were.
        ...(suite || includeDisruptive ? [suite, includeDisruptive] : []),
        ...(upgradeFrom ? [upgradeFrom] : []),
      ]),
    )
    .digest("hex");
}

/** The reply that points to identical active runs instead of starting twins. */
export function alreadyRunningReply(command: string, runs: readonly PrRun[], publicUrl: string): string {
  const links = runs.map((r) => `[network-stress (${r.arch})](${publicUrl}/runs/${r.id})`).join(", ");
  return `\`${command.replace(/`/g, "'")}\` is already running for \`${runs[0]!.subject.headSha.slice(0, 12)}\`: ${links}.`;
}
