import { setTimeout as sleep } from "node:timers/promises";
import { ExtError } from "./ext-error.ts";
import type { ProbeCluster } from "./probe-cluster.ts";

/** The node agent of a network plugin: where its DaemonSet's pods live and how they are labelled. */
export interface NodeAgent {
  plugin: "OVN-Kubernetes" | "openshift-sdn";
  namespace: string;
  selector: string;
}

const AGENTS: readonly NodeAgent[] = [
  { plugin: "OVN-Kubernetes", namespace: "openshift-ovn-kubernetes", selector: "app=ovnkube-node" },
  { plugin: "openshift-sdn", namespace: "openshift-sdn", selector: "app=sdn" },
];

/** Which network plugin's node agent runs here (the first whose pods exist), if any. */
export async function findNodeAgent(cluster: ProbeCluster): Promise<NodeAgent | undefined> {
  for (const agent of AGENTS) {
    if ((await cluster.listPods(agent.namespace, agent.selector)).length > 0) return agent;
  }
  return undefined;
}

/**
 * Deletes the node agent's pod on `node` and waits until its replacement there is Ready, then for
 * `settleMs` more, so the probes see the restart and what follows it. Returns what it did.
 */
export async function restartNodeAgent(options: {
  cluster: ProbeCluster;
  agent: NodeAgent;
  node: string;
  settleMs: number;
  readyTimeoutMs: number;
  signal: AbortSignal;
}): Promise<string[]> {
  const { cluster, agent, node, signal } = options;
  const pods = await cluster.listPods(agent.namespace, agent.selector);
  const old = pods.find((p) => p.nodeName === node && !p.deleting);
  if (!old) {
    throw new ExtError(`no ${agent.plugin} node agent pod (${agent.selector}) runs on ${node}`, {
      code: "ext-probes",
    });
  }
  // Probes first see the path healthy, so a disruption is the restart's and not the deployment's.
  await sleep(options.settleMs, undefined, { signal }).catch(() => undefined);
  const deletedAt = new Date();
  await cluster.deletePod(agent.namespace, old.name);
  const deadline = Date.now() + options.readyTimeoutMs;
  for (;;) {
    if (signal.aborted)
      throw new ExtError(`stopped while waiting for the node agent on ${node} to come back`, {
        code: "ext-probes",
      });
    const now = await cluster.listPods(agent.namespace, agent.selector);
    const replacement = now.find((p) => p.nodeName === node && p.uid !== old.uid && p.ready && !p.deleting);
    if (replacement) {
      const readyAt = new Date();
      await sleep(options.settleMs, undefined, { signal }).catch(() => undefined);
      return [
        `deleted ${agent.plugin} node agent pod ${agent.namespace}/${old.name} on ${node} at ${deletedAt.toISOString()}; ` +
          `${replacement.name} was Ready at ${readyAt.toISOString()} (${((readyAt.getTime() - deletedAt.getTime()) / 1000).toFixed(1)}s)`,
      ];
    }
    if (Date.now() > deadline) {
      throw new ExtError(
        `the ${agent.plugin} node agent on ${node} was not Ready again within ${Math.round(options.readyTimeoutMs / 1000)}s of deleting ${old.name}`,
        { code: "ext-probes" },
      );
    }
    await sleep(500, undefined, { signal }).catch(() => undefined);
  }
}
