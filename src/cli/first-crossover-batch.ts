import type { NextBatch } from "../analysis/decide-batch.ts";
import { firstBatchShape } from "../runs/first-batch-shape.ts";
import { UsageError } from "./usage-error.ts";

/**
 * The demo's first batch, a crossover by upgrade's (see firstBatchShape). Throws a UsageError when
 * the budget pays for no batch.
 */
export function firstCrossoverBatch(
  target: { from: number; to: number },
  budgetIterations: number,
): NextBatch {
  const next = firstBatchShape("crossover by upgrade", target, budgetIterations);
  if (!next)
    throw new UsageError(
      `--budget ${budgetIterations}: pays for no batch of the crossover, not even one new cluster with its upgrade and its iterations in each arm`,
    );
  return next;
}
