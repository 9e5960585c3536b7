import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";

/**
 * The plan with each arm's `[Upgrade]` target, as `targetOf` gives it (an arm without one keeps
 * none). Upgrade tests are disruptive, so the selection includes [Disruptive] tests.
 */
export function withUpgradeTargets(
  plan: ExecutionPlan,
  targetOf: (arm: Arm) => string | undefined,
): ExecutionPlan {
  return {
    ...plan,
    arms: plan.arms.map((a) => {
      const upgradeTarget = targetOf(a.arm);
      return upgradeTarget ? { ...a, upgradeTarget } : a;
    }),
    selection: { ...plan.selection, includeDisruptive: true },
  };
}
