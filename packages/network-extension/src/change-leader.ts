import { setTimeout as sleep } from "node:timers/promises";
import { ExtError } from "./ext-error.ts";
import type { ProbeCluster, ProbePodStatus } from "./probe-cluster.ts";

const NAMESPACE = "openshift-ovn-kubernetes";
const LEASES = ["ovn-kubernetes-master", "ovnkube-control-plane"];
const SELECTOR = "app=ovnkube-control-plane";

/** The control-plane leader: the lease naming it and its pod (the holder is a pod's or a node's name). */
export async function findLeader(
  cluster: ProbeCluster,
): Promise<{ lease: string; holder: string; pod: ProbePodStatus } | undefined> {
  for (const lease of LEASES) {
    const holder = await cluster.leaseHolder(NAMESPACE, lease);
    if (!holder) continue;
    const pods = await cluster.listPods(NAMESPACE, SELECTOR);
    const pod = pods.find((p) => p.name === holder) ?? pods.find((p) => p.nodeName === holder);
    if (pod) return { lease, holder, pod };
  }
  return undefined;
}

/**
 * Deletes the control-plane leader's pod and waits until leadership is held again by a Ready pod
 * other than the deleted one, then `settleMs` more.
 */
export async function changeLeader(options: {
  cluster: ProbeCluster;
  settleMs: number;
  readyTimeoutMs: number;
  signal: AbortSignal;
}): Promise<string[]> {
  const { cluster, signal } = options;
  await sleep(options.settleMs, undefined, { signal }).catch(() => undefined);
  const leader = await findLeader(cluster);
  if (!leader)
    throw new ExtError(`the control-plane leader (lease in ${NAMESPACE}) is gone`, { code: "ext-probes" });
  const deletedAt = new Date();
  await cluster.deletePod(NAMESPACE, leader.pod.name);
  const deadline = Date.now() + options.readyTimeoutMs;
  for (;;) {
    if (signal.aborted)
      throw new ExtError("stopped while waiting for a new control-plane leader", { code: "ext-probes" });
    const now = await findLeader(cluster);
    if (now && now.pod.uid !== leader.pod.uid && now.pod.ready && !now.pod.deleting) {
      const at = new Date();
      await sleep(options.settleMs, undefined, { signal }).catch(() => undefined);
      return [
        `deleted control-plane leader ${NAMESPACE}/${leader.pod.name} (lease ${leader.lease}) at ${deletedAt.toISOString()}; ` +
          `${now.pod.name} led at ${at.toISOString()} (${((at.getTime() - deletedAt.getTime()) / 1000).toFixed(1)}s)`,
      ];
    }
    if (Date.now() > deadline) {
      throw new ExtError(
        `no new control-plane leader within ${Math.round(options.readyTimeoutMs / 1000)}s of deleting ${leader.pod.name}`,
        { code: "ext-probes" },
      );
    }
    await sleep(500, undefined, { signal }).catch(() => undefined);
  }
}
