import type { RunDesign } from "../analysis/run-design-power.ts";
import { DEFAULT_CLUSTERS_PER_ARM } from "../config/cluster-count.ts";
import { adaptiveStep } from "../runs/adaptive-step.ts";
import type { RunRecord } from "../runs/run-record.ts";
import { adaptiveDesign, type ClusterSourceTraits } from "./adaptive-design.ts";

/** Tests the planner assumes when the plan does not list them (the binaries list theirs when the run starts). */
export const ASSUMED_TESTS = 500;

/**
 * A planned run's design as the power planner sees it, or undefined when the planner cannot say
 * what it sees: runs without a baseline payload arm (PR only, or the pooled history, which has no
 * clusters), upgrade runs (judged by disruption), and runs without a cluster source (`source`
 * undefined: their iterations go to whatever cluster the executor has). Fixed runs are separate
 * clusters, their iterations spread over `clusters` per arm (the fewer per cluster where they do
 * not divide); an adaptive run that goes in batches holds its first batch's clusters — shared, or
 * started on the baseline payload and upgraded to the PR payload (crossover) — and its budget is
 * what it could spend on them. An adaptive run that cannot go in batches (its arms' payloads differ
 * and no source may move its clusters) runs as a fixed run on separate clusters and is planned as
 * one, the design saying why (`adaptiveAsFixed`).
 */
export function runPowerDesign(
  run: RunRecord,
  source: ClusterSourceTraits | undefined,
): RunDesign | undefined {
  const arms = run.plan?.arms ?? [];
  const pr = arms.find((a) => a.arm === "pr");
  if (!source || !pr || !arms.some((a) => a.arm === "baseline")) return undefined;
  if (run.options.baseline !== "payload" || run.options.upgradeFrom) return undefined;
  const listed = pr.components.every((c) => c.tests !== undefined)
    ? new Set(pr.components.flatMap((c) => c.tests ?? [])).size
    : 0;
  const tests = { tests: listed || ASSUMED_TESTS, testsAssumed: listed === 0 };
  const adaptive = run.source.adaptive;
  const asAdaptive = adaptive ? adaptiveDesign(run, source) : undefined;
  if (adaptive && asAdaptive && "design" in asAdaptive) {
    const first = adaptiveStep(run, asAdaptive.design, [], undefined, asAdaptive.atOnce).next;
    if (!first) return undefined;
    return {
      kind: "adaptive",
      batchesOn: asAdaptive.design === "crossover by upgrade" ? "crossover" : "shared",
      clustersPerArm: first.clusters,
      iterationsPerCluster: Math.max(1, Math.floor(adaptive.budgetIterations / first.clusters)),
      ...tests,
      budgetIterations: adaptive.budgetIterations,
    };
  }
  const clustersPerArm = Math.min(run.source.clusters ?? DEFAULT_CLUSTERS_PER_ARM, run.options.iterations);
  return {
    kind: "separate",
    clustersPerArm,
    iterationsPerCluster: Math.floor(run.options.iterations / clustersPerArm),
    ...tests,
    ...(asAdaptive && "why" in asAdaptive ? { adaptiveAsFixed: asAdaptive.why } : {}),
  };
}
