import { z } from "zod";
import { CONNECTIONS, NETWORK_PATHS } from "@netstress/core/model/network-paths.ts";

/**
 * One thing a probe pod's checker probes: a probe server (`http`, GET /healthz) or the Kubernetes
 * API server (`apiserver`, TLS then GET /readyz, where any HTTP answer means reachable; its
 * address comes from KUBERNETES_SERVICE_HOST/PORT in the pod when host is empty).
 */
export const probeTargetSchema = z.object({
  path: z.enum(NETWORK_PATHS),
  connection: z.enum(CONNECTIONS),
  /** Names the target in intervals: a pod, a Service, a node's host, the API server. */
  name: z.string().min(1),
  kind: z.enum(["http", "apiserver"]).default("http"),
  host: z.string().default(""),
  port: z.number().int().min(0).max(65535).default(0),
});
export type ProbeTarget = z.infer<typeof probeTargetSchema>;
export type ProbeTargetInput = z.input<typeof probeTargetSchema>;

export const probeTargetsSchema = z.array(probeTargetSchema);
