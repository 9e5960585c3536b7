import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { isMonitor } from "./is-monitor.ts";
import type { AdaptiveBatch, ListedTests } from "./run-record.ts";

/**
 * The plan of an adaptive run's batch: each arm's components limited to the batch's tests they
 * listed before (`listed`, kept with the run's decisions), plus their `[Invariant]` monitors;
 * components left with none are left out. The first batch (no test list) runs the plan as it is,
 * and so does an arm that has listed nothing yet (a crossover's PR arm before its first cluster is
 * upgraded): running every test lists them.
 */
export function batchPlan(plan: ExecutionPlan, batch: AdaptiveBatch, listed: ListedTests): ExecutionPlan {
  if (!batch.tests) return plan;
  const wanted = new Set(batch.tests);
  const tests = new Map(
    listed.map((l) => [
      `${l.arm}\0${l.component}`,
      l.tests.filter((name) => wanted.has(name) || isMonitor(name)).sort(),
    ]),
  );
  return {
    ...plan,
    arms: plan.arms.map((arm) =>
      listed.some((l) => l.arm === arm.arm)
        ? {
            ...arm,
            components: arm.components.flatMap((component) => {
              const chosen = tests.get(`${arm.arm}\0${component.component}`);
              return chosen?.length ? [{ ...component, tests: chosen }] : [];
            }),
          }
        : arm,
    ),
  };
}
