import type { ExecutionPlan } from "../runner/execution-plan.ts";
import type { ResultRecord } from "../runner/result-record.ts";
import { isMonitor } from "./is-monitor.ts";
import type { AdaptiveBatch } from "./run-record.ts";

/**
 * The plan of an adaptive run's batch: each arm's components limited to the batch's tests they
 * ran before, plus their `[Invariant]` monitors; components left with none are left out. The
 * first batch (no test list) runs the plan as it is.
 */
export function batchPlan(
  plan: ExecutionPlan,
  batch: AdaptiveBatch,
  earlier: readonly ResultRecord[],
): ExecutionPlan {
  if (!batch.tests) return plan;
  const wanted = new Set(batch.tests);
  const listed = new Map<string, Set<string>>();
  for (const record of earlier) {
    if (!wanted.has(record.name) && !isMonitor(record.name)) continue;
    const key = `${record.arm}\0${record.component}`;
    listed.set(key, (listed.get(key) ?? new Set<string>()).add(record.name));
  }
  return {
    ...plan,
    arms: plan.arms.map((arm) => ({
      ...arm,
      components: arm.components.flatMap((component) => {
        const tests = listed.get(`${arm.arm}\0${component.component}`);
        return tests ? [{ ...component, tests: [...tests].sort() }] : [];
      }),
    })),
  };
}
