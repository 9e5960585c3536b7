import type { ResolveRunPlan } from "../../src/runs/plan-resolver.ts";

/**
 * A resolver that plans both arms, each with a test binary of its own and neither with a payload of its
 * own: the PR changes test binaries only, so both arms run on the released payload. With `payloads`
 * the arms run those (a PR payload of its own: crossover by upgrade).
 */
export function bothArmsPlan(payloads?: { pr: string; baseline: string }): ResolveRunPlan {
  return async ({ run }) => ({
    kind: "ready",
    ...(payloads ? { payloads } : {}),
    plan: {
      arch: run.arch,
      arms: (["pr", "baseline"] as const).map((arm) => ({
        arm,
        components: [{ component: "ovn-kubernetes", binary: "/nonexistent" }],
      })),
    },
  });
}
