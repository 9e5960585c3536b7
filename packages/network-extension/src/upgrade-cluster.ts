import { setTimeout as sleep } from "node:timers/promises";
import { ExtError } from "./ext-error.ts";
import type { ProbeCluster } from "./probe-cluster.ts";

/**
 * Asks ClusterVersion to update to `target` (spec.desiredUpdate, forced: the test names a pullspec,
 * not a signed release of the update graph) and waits until its history shows that image Completed.
 */
export async function upgradeCluster(options: {
  cluster: ProbeCluster;
  target: string;
  settleMs: number;
  timeoutMs: number;
  signal: AbortSignal;
}): Promise<string[]> {
  const { cluster, target, signal } = options;
  await sleep(options.settleMs, undefined, { signal }).catch(() => undefined);
  const before = await cluster.clusterVersion();
  const requestedAt = new Date();
  await cluster.requestUpdate(target);
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (signal.aborted)
      throw new ExtError(`stopped while the cluster was upgrading to ${target}`, { code: "ext-probes" });
    const state = await cluster.clusterVersion();
    const entry = state?.history.find((h) => h.image === target);
    if (entry?.state === "Completed") {
      const at = new Date();
      await sleep(options.settleMs, undefined, { signal }).catch(() => undefined);
      return [
        `upgraded from ${before?.history.find((h) => h.state === "Completed")?.image ?? before?.desiredImage ?? "?"} to ${target}: ` +
          `requested at ${requestedAt.toISOString()}, completed at ${at.toISOString()} (${((at.getTime() - requestedAt.getTime()) / 1000).toFixed(1)}s)`,
      ];
    }
    if (Date.now() > deadline) {
      throw new ExtError(
        `the upgrade to ${target} did not complete within ${Math.round(options.timeoutMs / 1000)}s (history: ${entry?.state ?? "not started"})`,
        { code: "ext-probes" },
      );
    }
    await sleep(2000, undefined, { signal }).catch(() => undefined);
  }
}
