import type { LabAddressPlan } from "./lab-address-plan.ts";
import { LabError } from "./lab-error.ts";

/**
 * What a test can break in a lab, and `clear` mends:
 * - `drop-route`: node `from` drops everything bound for node `to`'s pod CIDR (a blackhole rule
 *   ahead of the agent's route, so the agent's reconciling does not mend it);
 * - `stop-service-proxy`: node `node`'s Service proxy is killed, so ClusterIPs refuse there;
 * - `block-host`: node `node` and its pods cannot talk (its own traffic to its pod CIDR is
 *   prohibited — host-network pods, replies to pods and its Service proxy's local endpoints).
 */
export type LabFault =
  | { kind: "drop-route"; from: string; to: string }
  | { kind: "stop-service-proxy"; node: string }
  | { kind: "block-host"; node: string };

export const FAULT_KINDS = ["drop-route", "stop-service-proxy", "block-host"] as const;

/** A fault's identity, so that clearing one finds the fault injected. */
export function faultKey(fault: LabFault): string {
  return fault.kind === "drop-route" ? `drop-route ${fault.from}→${fault.to}` : `${fault.kind} ${fault.node}`;
}

/** The `ip rule` a routing fault adds (and `clear` deletes) in a node's namespace; undefined for the others. */
export function faultRule(
  plan: LabAddressPlan,
  fault: LabFault,
): { netns: string; rule: string[] } | undefined {
  const node = (name: string) => {
    const found = plan.nodes.find((n) => n.name === name);
    if (!found) {
      throw new LabError(
        `lab ${plan.name} has no node ${JSON.stringify(name)}: its nodes are ${plan.nodes.map((n) => n.name).join(", ")}`,
        { code: "BadLabOptions" },
      );
    }
    return found;
  };
  switch (fault.kind) {
    case "drop-route": {
      const [from, to] = [node(fault.from), node(fault.to)];
      if (from === to)
        throw new LabError(`drop-route needs two different nodes, not ${from.name} twice`, {
          code: "BadLabOptions",
        });
      return { netns: from.netns, rule: ["to", to.podCIDR, "blackhole", "pref", "100"] };
    }
    case "block-host": {
      const target = node(fault.node);
      return { netns: target.netns, rule: ["iif", "lo", "to", target.podCIDR, "prohibit", "pref", "101"] };
    }
    case "stop-service-proxy":
      node(fault.node);
      return undefined;
    default:
      throw new LabError(
        `unknown lab fault ${JSON.stringify((fault as { kind: unknown }).kind)}: one of ${FAULT_KINDS.join(", ")}`,
        { code: "BadLabOptions" },
      );
  }
}
