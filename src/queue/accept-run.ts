import { createHash, createHmac } from "node:crypto";
import type { Arch } from "../arch/arch.ts";
import type { RunSource } from "../config/run-source.ts";
import { publishRun, type RunDeps } from "./run-deps.ts";
import type { RunRecord, ShardResult } from "./run-record.ts";

export interface RunRequest {
  installationId: number;
  owner: string;
  repo: string;
  pr: number;
  headSha: string;
  arch: Arch;
  options: RunRecord["options"];
  source: RunSource;
  trigger: RunRecord["trigger"];
  /** Tells several runs of one delivery apart (command line, arch …); part of the run id. */
  slot: string;
  /** `more`: the finished run whose results this one extends. */
  parent?: RunRecord;
}

/**
 * Accepts a run: records it, shows it as a queued check run and queues its resolution. The run id
 * is derived from the delivery and the slot with a secret, so a retried intake finds the run it
 * already made, and nobody can guess another run's page address. While an active run has the same
 * PR, commit, arch and options, that run is returned instead (`created` false).
 */
export async function acceptRun(
  deps: RunDeps & { runIdSecret: string; now?: () => Date },
  request: RunRequest,
): Promise<{ run: RunRecord; created: boolean }> {
  const now = (deps.now ?? (() => new Date()))().toISOString();
  const id = createHmac("sha256", deps.runIdSecret)
    .update(`${request.trigger.deliveryId}\0${request.slot}\0${request.arch}`)
    .digest("hex")
    .slice(0, 32);
  const parent = request.parent;
  const shards: ShardResult[] = parent?.shards ?? [];
  const record: RunRecord = {
    id,
    requestId: `${request.trigger.deliveryId}/${request.slot}`,
    installationId: request.installationId,
    owner: request.owner,
    repo: request.repo,
    pr: request.pr,
    headSha: request.headSha,
    arch: request.arch,
    options: request.options,
    source: request.source,
    trigger: request.trigger,
    dedupeKey: dedupeKey(request),
    ...(parent ? { parentRunId: parent.id, plan: parent.plan } : {}),
    firstIteration: parent ? parent.firstIteration + parent.options.iterations : 0,
    shards,
    state: "queued",
    revision: 0,
    createdAt: now,
    updatedAt: now,
  };
  const { run } = await deps.store.create(record);
  if (run.id !== id) return { run, created: false };
  // This run (new, or made by an earlier attempt of the same intake): make sure it is visible and queued.
  const shown = run.checkRunId === undefined ? ((await publishRun(deps, run)) ?? run) : run;
  await deps.queues.enqueueResolve(run.id);
  return { run: shown, created: true };
}

function dedupeKey(request: RunRequest): string {
  const { iterations, baseline, focus = "" } = request.options;
  const more = request.parent ? `more:${request.parent.id}` : "fresh";
  return createHash("sha256")
    .update(
      JSON.stringify([
        request.owner,
        request.repo,
        request.pr,
        request.headSha,
        request.arch,
        iterations,
        baseline,
        focus,
        more,
      ]),
    )
    .digest("hex");
}
