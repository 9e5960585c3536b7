/**
 * The network paths the extension probes, each over a new connection per probe (what a client
 * opening connections sees) and over one reused keep-alive connection (what an established
 * connection sees: a dropped conntrack entry or a flushed route shows here first).
 */
export const NETWORK_PATHS = [
  "pod-to-pod-same-node",
  "pod-to-pod-cross-node",
  "pod-to-service",
  "pod-to-host",
  "host-to-pod",
  "pod-to-apiserver",
] as const;
export type NetworkPath = (typeof NETWORK_PATHS)[number];

export const CONNECTIONS = ["new", "reused"] as const;
export type Connection = (typeof CONNECTIONS)[number];
