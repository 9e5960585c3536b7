import type { RunProgress } from "../runner/run-plan.ts";
import type { ProvisionProgress } from "../runs/clusters-under-test.ts";
import type { RunRecord } from "../runs/run-record.ts";
import { createCoalescer } from "./coalesce.ts";
import type { RunDeps } from "./run-deps.ts";

export interface RunProgressUpdates {
  /** The executor's latest count of executions. */
  executions(progress: RunProgress): void;
  /** A cluster source's report on an arm's clusters. */
  provisioning(progress: ProvisionProgress): void;
  /** Stores and publishes what is pending now. */
  flush(): Promise<void>;
}

/**
 * A run's live progress (executions, clusters on their way), stored and published at most once
 * per interval: the check run shows the newest report of each kind.
 */
export function runProgressUpdates(input: {
  deps: RunDeps;
  runId: string;
  intervalMs: number;
}): RunProgressUpdates {
  const { deps, runId } = input;
  let progress: RunProgress | undefined;
  /** Provisioning reports not stored yet, oldest first. */
  const provisioning: ProvisionProgress[] = [];
  const updates = createCoalescer({
    intervalMs: input.intervalMs,
    task: async () => {
      let updated: RunRecord | undefined;
      // The newest report of each arm is what the check run shows.
      const latest = new Map(provisioning.splice(0).map((p) => [p.arm, p]));
      for (const p of latest.values())
        updated = (await deps.store.apply(runId, { type: "provisioning", progress: p })) ?? updated;
      if (progress) updated = (await deps.store.apply(runId, { type: "progress", progress })) ?? updated;
      if (updated) await deps.publish(updated);
    },
    onError: (error) => deps.log.warn({ err: error }, "progress update failed"),
  });
  return {
    executions(p) {
      progress = p;
      updates.request();
    },
    provisioning(p) {
      provisioning.push(p);
      updates.request();
    },
    flush: () => updates.flush(),
  };
}
