import {
  CONNECTIONS,
  NETWORK_PATHS,
  type Connection,
  type NetworkPath,
} from "@netstress/core/model/network-paths.ts";

/** What a test does; the name carries the markers the runner and origin schedule by. */
export type NetworkTestKind =
  | { kind: "invariant"; path: NetworkPath; connection: Connection }
  | { kind: "agent-restart" }
  | { kind: "leader-change" }
  | { kind: "upgrade" };

export type NetworkTest = NetworkTestKind & {
  name: string;
  labels: string[];
  suite: string;
};

export const INVARIANT_SUITE = "netstress/network/invariants";
export const DISRUPTIVE_SUITE = "netstress/network/disruptive";
export const UPGRADE_SUITE = "netstress/network/upgrade";

const over = (connection: Connection) =>
  connection === "new" ? "over new connections" : "over a reused connection";

/**
 * Every test of `netstress-network-tests`: one invariant per path and kind of connection (each
 * its own result, so each is its own row in the analysis), the disruptive tests, the upgrade test.
 * Names are stable: the history and the analysis key on them.
 */
export function networkTests(): NetworkTest[] {
  const invariants = NETWORK_PATHS.flatMap((path) =>
    CONNECTIONS.map((connection): NetworkTest => ({
      kind: "invariant",
      path,
      connection,
      name: `[sig-network][Invariant] ${path} should stay reachable ${over(connection)}`,
      labels: ["sig-network", "Invariant"],
      suite: INVARIANT_SUITE,
    })),
  );
  return [
    ...invariants,
    {
      kind: "agent-restart",
      name: "[sig-network][Disruptive][Serial] every network path should stay reachable through a node agent restart",
      labels: ["sig-network", "Disruptive", "Serial"],
      suite: DISRUPTIVE_SUITE,
    },
    {
      kind: "leader-change",
      name: "[sig-network][Disruptive][Serial] every network path should stay reachable through a control-plane leader change",
      labels: ["sig-network", "Disruptive", "Serial"],
      suite: DISRUPTIVE_SUITE,
    },
    {
      kind: "upgrade",
      name: "[sig-network][Disruptive][Upgrade][Serial] every network path should stay reachable while the cluster upgrades",
      labels: ["sig-network", "Disruptive", "Upgrade", "Serial"],
      suite: UPGRADE_SUITE,
    },
  ];
}
