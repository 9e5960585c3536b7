import { armPayload } from "./arm-payload.ts";
import { payloadName } from "./payload-name.ts";
import type { AdaptiveState, RunRecord } from "./run-record.ts";

/** A crossover batch's upgrades while the run waits for them, as its check run and its gate show them. */
export interface UpgradingPhase {
  /** The batch (1-based) whose PR half runs on the clusters once they are upgraded. */
  batch: number;
  since: string;
  /** The PR arm's payload they move to. */
  payload?: string;
  clusters: NonNullable<AdaptiveState["upgrading"]>["clusters"];
  /** "upgrading 4 cluster(s) to the PR payload since 20:14 UTC (batch 3): 1 done, 1 failed". */
  line: string;
}

/** The upgrades a running crossover waits for (see AdaptiveState.upgrading); undefined when none. */
export function upgradingPhase(run: RunRecord): UpgradingPhase | undefined {
  const upgrading = run.adaptive?.upgrading;
  if (!upgrading || run.state !== "running") return undefined;
  const count = (state: UpgradingPhase["clusters"][number]["state"]) =>
    upgrading.clusters.filter((c) => c.state === state).length;
  const done = count("upgraded");
  const failed = count("failed");
  const ended = done + failed > 0 ? `: ${done} done${failed > 0 ? `, ${failed} failed` : ""}` : "";
  const since = new Date(upgrading.since).toISOString().slice(11, 16);
  const payload = armPayload(run, "pr");
  return {
    ...upgrading,
    ...(payload ? { payload } : {}),
    line: `upgrading ${upgrading.clusters.length} cluster(s) to ${payloadName(run, "pr")} since ${since} UTC (batch ${upgrading.batch})${ended}`,
  };
}
