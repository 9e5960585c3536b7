import type { PodNetwork, PodNetworkAttachment, PodNetworkRequest, PodProbe } from "../sim/pod-network.ts";
import type { LabAddressPlan, LabNodePlan } from "./lab-address-plan.ts";
import { LabError } from "./lab-error.ts";
import { runIp } from "./run-ip.ts";

interface Attached {
  netns: string;
  node: LabNodePlan;
  host: number;
}

/**
 * The lab's network plugin for the fake kubelet: a pod gets a network namespace of its own, a
 * veth whose node end is on the node's pod bridge, the next free address of the node's pod CIDR
 * and a default route via the node; a host-network pod runs in the node's namespace with the
 * node's address. Containers start as `ip netns exec <ns> …` and see the API at the lab address.
 */
export class LabPodNetwork implements PodNetwork {
  private readonly attached = new Map<string, Attached>();
  private readonly used = new Map<string, Set<number>>();
  /** The last address handed out per node: the next pod takes the one after, not a just-freed one. */
  private readonly last = new Map<string, number>();
  private sequence = 0;

  constructor(
    private readonly plan: LabAddressPlan,
    private readonly env: Record<string, string>,
    /** Runs a readiness check in the named node's namespace. */
    readonly probe: (check: PodProbe) => Promise<boolean>,
  ) {}

  /** The namespace a pod runs in (undefined for one that is not attached). */
  netnsOf(namespace: string, name: string): string | undefined {
    return this.attached.get(`${namespace}/${name}`)?.netns;
  }

  async attach(pod: PodNetworkRequest): Promise<PodNetworkAttachment> {
    const node = this.plan.nodes.find((n) => n.name === pod.nodeName);
    if (!node) {
      throw new LabError(
        `pod ${pod.namespace}/${pod.name} is bound to ${pod.nodeName}, which is no node of this lab`,
        {
          code: "BadLabOptions",
        },
      );
    }
    const env = { ...this.env };
    if (pod.hostNetwork) {
      return {
        podIP: node.ip,
        hostIP: node.ip,
        env,
        wrap: (argv) => ["ip", "netns", "exec", node.netns, ...argv],
      };
    }
    const taken = this.used.get(node.name) ?? new Set<number>();
    this.used.set(node.name, taken);
    // A just-freed address is the last one reused: the node and its pods still have its old pod's
    // MAC in their neighbour caches for up to half a minute, and would send a new pod's traffic there.
    let host = 0;
    for (let step = 1; step <= 253; step++) {
      const candidate = 2 + (((this.last.get(node.name) ?? 1) - 2 + step) % 253);
      if (!taken.has(candidate)) {
        host = candidate;
        break;
      }
    }
    if (host === 0) {
      throw new LabError(`node ${node.name} has no free address left in ${node.podCIDR}`, {
        code: "BadLabOptions",
      });
    }
    taken.add(host);
    this.last.set(node.name, host);
    this.sequence += 1;
    const netns = this.plan.podNetns(this.sequence);
    const veth = `v${this.sequence}`;
    const ip = `${node.podPrefix}.${host}`;
    this.attached.set(`${pod.namespace}/${pod.name}`, { netns, node, host });
    await runIp(["netns", "add", netns]);
    await runIp([
      "link",
      "add",
      veth,
      "netns",
      node.netns,
      "type",
      "veth",
      "peer",
      "name",
      "eth0",
      "netns",
      netns,
    ]);
    await runIp(["link", "set", veth, "master", "br0", "up"], { netns: node.netns });
    await runIp(["link", "set", "lo", "up"], { netns });
    await runIp(["addr", "add", `${ip}/24`, "dev", "eth0"], { netns });
    await runIp(["link", "set", "eth0", "up"], { netns });
    await runIp(["route", "add", "default", "via", node.gateway], { netns });
    return { podIP: ip, hostIP: node.ip, env, wrap: (argv) => ["ip", "netns", "exec", netns, ...argv] };
  }

  async detach(pod: PodNetworkRequest): Promise<void> {
    const key = `${pod.namespace}/${pod.name}`;
    const attached = this.attached.get(key);
    if (!attached) return;
    this.attached.delete(key);
    // Deleting the namespace takes its veth pair, address and routes along.
    await runIp(["netns", "del", attached.netns], { allowFailure: true });
    await runIp(["neigh", "flush", "to", `${attached.node.podPrefix}.${attached.host}`], {
      netns: attached.node.netns,
      allowFailure: true,
    });
    this.used.get(attached.node.name)?.delete(attached.host);
  }
}
