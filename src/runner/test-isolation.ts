import type { OteSpec } from "../ote/schemas.ts";
import type { AloneReason } from "@netstress/core/model/result-record.ts";

/** How a test may share the cluster, read from its name, labels and resources.isolation. */
export interface TestIsolation {
  alone?: AloneReason;
  /** `[sig-network]` tests, which may be held to a lower parallelism. */
  network: boolean;
  /**
   * `[Invariant]` tests: monitors that span their iteration (see InvariantSpans). They take no slot
   * of the parallelism and run beside everything, tests that run alone included, as origin's monitors do.
   */
  invariant?: boolean;
  /**
   * `[Upgrade]` tests: they upgrade the cluster under test, so they run alone, at most once per
   * cluster in a run, and are never retried (the cluster runs the target afterwards).
   */
  upgrade?: boolean;
  /**
   * `[Serial:Self]` tests ("can't be run in parallel with a copy of itself", origin): no two
   * executions with this key overlap, whichever arm and iteration. The key is the test's first
   * name, so a PR's renamed copy and the baseline's still exclude each other.
   */
  serialSelf?: string;
  /** Tests sharing a conflict name never run at the same time. */
  conflicts: readonly string[];
  /** Applied while the test runs: only tests tolerating every active taint may start. */
  taints: readonly string[];
  tolerations: readonly string[];
}

const hasMarker = (spec: OteSpec, marker: string) =>
  spec.name.includes(`[${marker}]`) || spec.labels.some((l) => l === marker || l === `[${marker}]`);

/** Classifies a spec the way openshift-tests schedules it. */
export function testIsolation(spec: OteSpec): TestIsolation {
  const { conflict, taint, toleration } = spec.resources.isolation;
  const upgrade = hasMarker(spec, "Upgrade");
  // An upgrade disrupts the whole cluster, whether or not its name says [Disruptive].
  const alone: AloneReason | undefined =
    hasMarker(spec, "Disruptive") || upgrade
      ? "disruptive"
      : hasMarker(spec, "Serial")
        ? "serial"
        : conflict.includes("*")
          ? "isolation"
          : undefined;
  return {
    ...(alone ? { alone } : {}),
    network: spec.name.includes("[sig-network]"),
    ...(hasMarker(spec, "Invariant") ? { invariant: true } : {}),
    ...(upgrade ? { upgrade: true } : {}),
    ...(hasMarker(spec, "Serial:Self") ? { serialSelf: spec.originalName ?? spec.name } : {}),
    conflicts: conflict,
    taints: taint,
    tolerations: toleration,
  };
}
