import type { Arm } from "@netstress/core/model/result-record.ts";
import {
  executionPlanSchema,
  type ExecutionPlan,
  type PlanComponent,
} from "@netstress/core/model/execution-plan.ts";
import { parseImageReference } from "../registry/image-reference.ts";
import { locateImage } from "./locate-image.ts";
import { PayloadError } from "./payload-error.ts";
import type { ResolvedComponent, ResolvedPlan } from "./resolved-plan.ts";

/**
 * The runner's execution plan for a resolved plan (and its baseline plan): every available binary
 * named by its image, pinned to the digest planned for the arch, and where the image keeps it.
 * Nothing is fetched: a build-farm pod copies each binary out of its image, and the local executor
 * fetches what it runs. Only tags of the PR arm run in the baseline arm; components without a
 * binary are left out.
 */
export async function planExecution(options: {
  /** The PR arm: the plan with overrides (or the PR payload). */
  plan: ResolvedPlan;
  /** The baseline arm, e.g. the same payload resolved without overrides. */
  baselinePlan?: ResolvedPlan;
}): Promise<ExecutionPlan> {
  const { plan, baselinePlan } = options;
  if (baselinePlan && baselinePlan.arch !== plan.arch) {
    throw new PayloadError(
      "nothing-to-run",
      `the baseline plan is for ${baselinePlan.arch}, the PR plan for ${plan.arch}`,
    );
  }

  async function named(source: ResolvedPlan, component: ResolvedComponent): Promise<PlanComponent> {
    // A component image the payload's own OCI layout holds is read from there, as planning read it.
    const located = await locateImage({
      pullspec: component.image,
      payload: parseImageReference(source.payload.ref),
    });
    const inLayout =
      located.kind === "oci-layout" && parseImageReference(component.image).kind === "registry";
    return {
      component: component.tag,
      source: component.source,
      image: component.image,
      digest: component.digest!,
      ...(component.commit ? { commit: component.commit } : {}),
      imagePath: component.binaryPath,
      ...(component.referrer ? { referrer: component.referrer } : {}),
      ...(inLayout ? { layout: located.dir } : {}),
    };
  }

  const arm = async (arm: Arm, source: ResolvedPlan, include: (c: ResolvedComponent) => boolean) => {
    const usable = source.components.filter((c) => c.available && c.digest !== null && include(c));
    if (usable.length === 0) {
      const reasons = source.components.map((c) => `${c.tag}: ${c.reason ?? "not in this arm"}`).join("; ");
      throw new PayloadError(
        "nothing-to-run",
        `the ${arm} arm has no component with a usable ${source.arch} test binary${reasons ? ` (${reasons})` : ""}`,
      );
    }
    return { arm, components: await Promise.all(usable.map((c) => named(source, c))) };
  };

  const pr = await arm("pr", plan, () => true);
  const prTags = new Set(pr.components.map((c) => c.component));
  const arms = baselinePlan ? [pr, await arm("baseline", baselinePlan, (c) => prTags.has(c.tag))] : [pr];
  return executionPlanSchema.parse({ arch: plan.arch, arms });
}
