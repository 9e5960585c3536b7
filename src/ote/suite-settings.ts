import type { OteSuite } from "./suite-membership.ts";

/** What a suite's definition says about running its tests, in netstress's units. */
export interface SuiteSettings {
  /** Default iterations: how many times each test runs. */
  count?: number;
  /** The most tests that run at once. */
  parallelism?: number;
  /** Default per-test timeout. */
  testTimeoutMs?: number;
  /** The suite is expected to disrupt the cluster (clusterStability "Disruptive"). */
  disruptive?: boolean;
}

/**
 * The settings of the suite a run asked for, from every binary's definition of that name (a child
 * suite's own settings never apply: the parent's supersede them, as openshift-tests does). When
 * definitions disagree the strictest wins: the fewest at once, the shortest timeout, the most
 * runs, and disruptive when any says so. Zero means "not set", as in the framework's Go structs.
 */
export function suiteSettings(options: { suite: string; suites: readonly OteSuite[] }): SuiteSettings {
  const definitions = options.suites.filter((s) => s.name === options.suite);
  const set = (values: (number | null | undefined)[]) => values.filter((v): v is number => !!v && v > 0);
  const counts = set(definitions.map((d) => d.count));
  const parallelisms = set(definitions.map((d) => d.parallelism));
  const timeouts = set(definitions.map((d) => d.testTimeout));
  return {
    ...(counts.length ? { count: Math.max(...counts) } : {}),
    ...(parallelisms.length ? { parallelism: Math.min(...parallelisms) } : {}),
    // Nanoseconds to milliseconds; a timeout under a millisecond still times out.
    ...(timeouts.length ? { testTimeoutMs: Math.max(1, Math.round(Math.min(...timeouts) / 1e6)) } : {}),
    ...(definitions.some((d) => d.clusterStability === "Disruptive") ? { disruptive: true } : {}),
  };
}
