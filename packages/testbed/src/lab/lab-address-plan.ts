import { LabError } from "./lab-error.ts";

/** One node of a lab: its Kubernetes name, network namespace, underlay address and pod range. */
export interface LabNodePlan {
  name: string;
  netns: string;
  /** The node's address on the underlay (its InternalIP). */
  ip: string;
  podCIDR: string;
  /** The first address of the pod CIDR, on the node's pod bridge: its pods' default gateway. */
  gateway: string;
  /** The pod CIDR's first three octets, to which a pod's host number is appended. */
  podPrefix: string;
}

/** Where everything of one lab lives. Slot s keeps two labs (one per arm) in distinct ranges. */
export interface LabAddressPlan {
  name: string;
  slot: number;
  underlayCIDR: string;
  underlayNetns: string;
  /** The namespace of the API relay (the lab's "master"), and its address on the underlay. */
  masterNetns: string;
  apiAddress: string;
  apiPort: number;
  clusterCIDR: string;
  serviceCIDR: string;
  nodes: LabNodePlan[];
  /** The prefix every namespace of the lab carries (`<name>-`). */
  netnsPrefix: string;
  podNetns(sequence: number): string;
}

export const MAX_SLOTS = 64;
export const MAX_NODES = 50;

/**
 * The lab's address plan for slot `slot` (0–63): underlay 10.250.<slot>.0/24 (the API relay at
 * .2:6443, node i at .(10+i)), cluster network 10.(128+slot).0.0/16 with node i's pods in
 * 10.(128+slot).i.0/24 (gateway .1), Services in 172.30.<slot>.0/24.
 */
export function labAddressPlan(options: { name: string; slot: number; nodes: number }): LabAddressPlan {
  const { name, slot, nodes } = options;
  if (!Number.isInteger(slot) || slot < 0 || slot >= MAX_SLOTS) {
    throw new LabError(`a lab's slot is 0 to ${MAX_SLOTS - 1}, not ${slot}`, { code: "BadLabOptions" });
  }
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) {
    throw new LabError(`a lab has 1 to ${MAX_NODES} nodes, not ${String(nodes)}`, { code: "BadLabOptions" });
  }
  const cluster = 128 + slot;
  return {
    name,
    slot,
    underlayCIDR: `10.250.${slot}.0/24`,
    underlayNetns: `${name}-underlay`,
    masterNetns: `${name}-master`,
    apiAddress: `10.250.${slot}.2`,
    apiPort: 6443,
    clusterCIDR: `10.${cluster}.0.0/16`,
    serviceCIDR: `172.30.${slot}.0/24`,
    netnsPrefix: `${name}-`,
    nodes: Array.from({ length: nodes }, (_, i) => ({
      name: `${name}-node-${i}`,
      netns: `${name}-node-${i}`,
      ip: `10.250.${slot}.${10 + i}`,
      podCIDR: `10.${cluster}.${i}.0/24`,
      gateway: `10.${cluster}.${i}.1`,
      podPrefix: `10.${cluster}.${i}`,
    })),
    podNetns: (sequence) => `${name}-pod-${sequence}`,
  };
}
