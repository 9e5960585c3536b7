import type { ResolveRunPlan } from "../../src/runs/plan-resolver.ts";

/**
 * A resolver that plans both arms, each with a test binary of its own and neither with a payload of its
 * own: the PR changes test binaries only, so both arms run on the released payload.
 */
export function bothArmsPlan(): ResolveRunPlan {
  return async ({ run }) => ({
    kind: "ready",
    plan: {
      arch: run.arch,
      arms: (["pr", "baseline"] as const).map((arm) => ({
        arm,
        components: [{ component: "ovn-kubernetes", binary: "/nonexistent" }],
      })),
    },
  });
}
