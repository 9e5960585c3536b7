import { createHash } from "node:crypto";

/**
 * Every object netstress creates in a cluster carries these (the farm's Jobs, Hive's claims and
 * deployments of the cluster sources); selectors and reconciliation use them.
 */
export const LABELS = {
  managedBy: "app.kubernetes.io/managed-by",
  component: "app.kubernetes.io/component",
  run: "netstress.io/run",
  pr: "netstress.io/pr",
  arms: "netstress.io/arms",
  arch: "netstress.io/arch",
  shard: "netstress.io/shard",
  iteration: "netstress.io/iteration",
  attempt: "netstress.io/attempt",
  /** Which bot deployment (its Redis prefix) owns the Job: two bots may share a namespace. */
  instance: "netstress.io/instance",
} as const;
export const MANAGED_BY = "netstress";
/** Label values are at most 63 characters; the full run id travels in this annotation. */
export const RUN_ID_ANNOTATION = "netstress.io/run-id";

/** A label-safe, fixed-length stand-in for a run id of any spelling. */
export function runKey(runId: string): string {
  return createHash("sha256").update(runId).digest("hex").slice(0, 12);
}

/** A label value from any text: invalid characters become "_", cut to 63. */
export function labelSafe(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 63);
  return cleaned.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}
