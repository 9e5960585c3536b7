import { decideBatch, type NextBatch } from "../analysis/decide-batch.ts";
import type { DecideHistoryPayload } from "../analysis/decide-records.ts";
import { DEFAULT_DESIGN_COSTS } from "../analysis/power-types.ts";
import type { AdaptiveState } from "./run-record.ts";

/** The name the first batch's shape is asked for under: the tests are known only once it ran. */
export const EVERY_TEST = "(every test)";

/**
 * What a new cluster and an upgrade cost in a crossover by upgrade, in iterations of one arm: the
 * planner's default cost model (a 45-minute install, a 30-minute upgrade, a 10-minute iteration),
 * so that the budget is spent as the power line prices it.
 */
export const CROSSOVER_COSTS = {
  cluster: DEFAULT_DESIGN_COSTS.installMinutes / DEFAULT_DESIGN_COSTS.iterationMinutes,
  upgrade: (DEFAULT_DESIGN_COSTS.upgradeMinutes ?? 0) / DEFAULT_DESIGN_COSTS.iterationMinutes,
};

/**
 * The first batch of an adaptive run as the decision step plans it for a run that has seen
 * nothing — for one test, one execution an iteration and arm, so that the budget counts iterations
 * of one arm (a fixed run of `budgetIterations` per arm is twice that). Shared clusters cost
 * nothing beyond their executions (they are reported as cluster-hours); a crossover's new clusters
 * and upgrades are priced in. With the stream's `history` of the baseline payload a crossover
 * starts new clusters on the PR payload, one per history payload. Null when the budget pays for no batch.
 */
export function firstBatchShape(
  design: AdaptiveState["design"],
  target: { from: number; to: number },
  budgetIterations: number,
  history: readonly DecideHistoryPayload[] = [],
  /** A crossover's most clusters held at once (DecideInput.atOnce). */
  atOnce?: number,
): NextBatch | null {
  const crossover = design === "crossover by upgrade";
  return decideBatch({
    tests: [EVERY_TEST],
    target,
    payloads: crossover ? "differ" : "same",
    costs: crossover
      ? { cluster: Math.round(CROSSOVER_COSTS.cluster), upgrade: Math.round(CROSSOVER_COSTS.upgrade) }
      : { cluster: 0, upgrade: 0 },
    ...(history.length > 0 ? { history } : {}),
    ...(crossover && atOnce !== undefined ? { atOnce } : {}),
    budget: 2 * budgetIterations,
  }).decision.next;
}
