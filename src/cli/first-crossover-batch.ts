import { decideBatch, type NextBatch } from "../analysis/decide-batch.ts";
import { DEFAULT_DESIGN_COSTS } from "../analysis/power-types.ts";
import { UsageError } from "./usage-error.ts";

/** The name the first batch's shape is asked for under: the tests are known only once it ran. */
export const EVERY_TEST = "(every test)";

/**
 * What a new cluster and an upgrade cost, in iterations of one arm: the planner's default cost
 * model (a 45-minute install, a 30-minute upgrade, a 10-minute iteration), so that the budget is
 * spent as the power line prices it.
 */
export const CROSSOVER_COSTS = {
  cluster: DEFAULT_DESIGN_COSTS.installMinutes / DEFAULT_DESIGN_COSTS.iterationMinutes,
  upgrade: (DEFAULT_DESIGN_COSTS.upgradeMinutes ?? 0) / DEFAULT_DESIGN_COSTS.iterationMinutes,
};

/**
 * The first batch of a crossover by upgrade as the decision step plans it for a run that has seen
 * nothing — for one test, one execution an iteration and arm, so that the budget counts iterations
 * of one arm (a fixed run of `budgetIterations` per arm is twice that). Throws a UsageError when the
 * budget pays for no batch.
 */
export function firstCrossoverBatch(
  target: { from: number; to: number },
  budgetIterations: number,
): NextBatch {
  const { next } = decideBatch({
    tests: [EVERY_TEST],
    target,
    payloads: "differ",
    costs: { cluster: Math.round(CROSSOVER_COSTS.cluster), upgrade: Math.round(CROSSOVER_COSTS.upgrade) },
    budget: 2 * budgetIterations,
  }).decision;
  if (!next)
    throw new UsageError(
      `--budget ${budgetIterations}: pays for no batch of the crossover, not even one new cluster with its upgrade and its iterations in each arm`,
    );
  return next;
}
