import type { Arch } from "../arch/arch.ts";
import type { RunSource } from "../config/run-source.ts";
import { acceptRun } from "../queue/accept-run.ts";
import type { RunRecord } from "../queue/run-record.ts";
import type { IntakeDeps, PullRequestTarget } from "./intake-deps.ts";

export interface StressRunsRequest {
  target: PullRequestTarget;
  headSha: string;
  arches: readonly Arch[];
  options: RunRecord["options"];
  source: RunSource;
  trigger: RunRecord["trigger"];
  slot: string;
  /** Per arch: the finished run this one extends (`more`). */
  parents?: ReadonlyMap<Arch, RunRecord>;
}

/** One accepted run per arch; `created` false means an identical active run was found instead. */
export async function startStressRuns(
  deps: IntakeDeps,
  request: StressRunsRequest,
): Promise<{ run: RunRecord; created: boolean }[]> {
  const results = [];
  for (const arch of request.arches) {
    const parent = request.parents?.get(arch);
    results.push(
      await acceptRun(deps, {
        installationId: request.target.installationId,
        owner: request.target.owner.login,
        repo: request.target.repo,
        pr: request.target.pr,
        headSha: request.headSha,
        arch,
        options: request.options,
        source: request.source,
        trigger: request.trigger,
        slot: request.slot,
        ...(parent ? { parent } : {}),
      }),
    );
  }
  return results;
}

/** The reply that points to identical active runs instead of starting twins. */
export function alreadyRunningReply(command: string, runs: readonly RunRecord[], publicUrl: string): string {
  const links = runs.map((r) => `[network-stress (${r.arch})](${publicUrl}/runs/${r.id})`).join(", ");
  return `\`${command.replace(/`/g, "'")}\` is already running for \`${runs[0]!.headSha.slice(0, 12)}\`: ${links}.`;
}
