/**
 * The labels of every namespace the extension makes for its probes. Whoever gives a cluster under
 * test back deletes the namespaces that carry them all (a runner killed mid-test leaves its probes
 * behind), and no namespace that does not.
 */
export const PROBE_NAMESPACE_LABELS = {
  "app.kubernetes.io/managed-by": "netstress",
  "netstress.io/probes": "true",
} as const;
