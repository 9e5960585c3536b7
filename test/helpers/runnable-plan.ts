import { join } from "node:path";
import type { ExecutionPlan, PlanComponent } from "@netstress/core/model/execution-plan.ts";
import { fetchPlanBinaries } from "../../src/payload/fetch-plan-binaries.ts";
import { planExecution } from "../../src/payload/plan-execution.ts";
import type { ResolvedPlan } from "../../src/payload/resolved-plan.ts";
import type { Registry } from "../../src/registry/create-registry.ts";

type Fetched = PlanComponent & { binary: string };
type Arm = Omit<ExecutionPlan["arms"][number], "components"> & { components: Fetched[] };

/**
 * The execution plan of resolved plans with every binary fetched into `<cacheDir>/binaries`, as
 * `netstress run --payload` and the local executor have it before the runner starts.
 */
export async function runnablePlan(options: {
  plan: ResolvedPlan;
  baselinePlan?: ResolvedPlan;
  cacheDir: string;
  registry: Registry;
}): Promise<Omit<ExecutionPlan, "arms"> & { arms: Arm[] }> {
  const { plan, baselinePlan, cacheDir, registry } = options;
  const fetched = await fetchPlanBinaries({
    plan: await planExecution({ plan, ...(baselinePlan ? { baselinePlan } : {}) }),
    registry,
    outDir: join(cacheDir, "binaries"),
  });
  return {
    ...fetched,
    arms: fetched.arms.map((arm) => ({
      ...arm,
      components: arm.components.map((c) => ({ ...c, binary: c.binary! })),
    })),
  };
}
