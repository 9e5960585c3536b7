import { z } from "zod";
import { PROBE_NAMESPACE_LABELS } from "@netstress/core/kube/probe-namespace-labels.ts";
import type { KubeObjects } from "@netstress/core/kube/kube-objects.ts";

const namespaceSchema = z.object({
  metadata: z.object({
    name: z.string(),
    labels: z.record(z.string(), z.string()).default({}),
    deletionTimestamp: z.string().optional(),
  }),
});

/**
 * Deletes the namespaces the network extension made for its probes on a cluster under test and
 * left there (its runner was killed mid-test); returns their names. Only namespaces carrying every
 * probe label, checked here too (never trusting the server's selector alone); one already being
 * deleted is left to finish.
 */
export async function reapProbeNamespaces(objects: KubeObjects): Promise<string[]> {
  const labels = Object.entries(PROBE_NAMESPACE_LABELS);
  const found = await objects.list("namespaces", {
    labelSelector: labels.map(([key, value]) => `${key}=${value}`).join(","),
  });
  const leftovers = found
    .map((object) => namespaceSchema.parse(object).metadata)
    .filter((ns) => !ns.deletionTimestamp && labels.every(([key, value]) => ns.labels[key] === value))
    .map((ns) => ns.name);
  for (const name of leftovers) await objects.delete("namespaces", name);
  return leftovers;
}
