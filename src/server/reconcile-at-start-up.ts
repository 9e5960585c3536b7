import { requeueActiveRuns } from "../queue/requeue-active-runs.ts";
import type { BotCore } from "./start-bot-core.ts";

/**
 * What a worker tier finds left over from the processes before it: the farm's Jobs, the clusters
 * under test of ended runs, and runs whose queue job was never added.
 */
export async function reconcileAtStartUp({ farm, clusters, store, queues, log }: BotCore): Promise<void> {
  // Jobs of runs that ended while no bot ran go; those of active runs are adopted.
  await farm?.reconcile();
  // Claims, deployments and leases of runs that ended while no bot ran are given back.
  const provider = clusters();
  if (provider) {
    try {
      const { released } = await provider.reconcile(
        async () => new Set((await store.listActive()).map((run) => run.id)),
      );
      if (released > 0) log.info({ released }, "gave back clusters under test of ended runs");
    } catch (error) {
      // A hub that does not answer now is tried again at the next start; Hive's own lifetimes hold.
      log.warn({ err: error }, "clusters under test not reconciled");
    }
  }
  // Runs whose queue job was never added (the process died in between) go on their way now.
  await requeueActiveRuns({ runs: store, queues, logger: log });
}
