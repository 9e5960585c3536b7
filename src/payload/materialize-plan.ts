import { join } from "node:path";
import { createRegistry, type Registry } from "../registry/create-registry.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import {
  executionPlanSchema,
  type ExecutionPlan,
  type PlanComponent,
} from "@netstress/core/model/execution-plan.ts";
import { fetchPlannedBinary } from "./fetch-planned-binary.ts";
import { PayloadError } from "./payload-error.ts";
import type { ResolvedComponent, ResolvedPlan } from "./resolved-plan.ts";

export interface MaterializePlanOptions {
  /** The PR arm: the plan with overrides (or the PR payload). */
  plan: ResolvedPlan;
  /** The baseline arm, e.g. the same payload resolved without overrides; only tags of the PR arm run. */
  baselinePlan?: ResolvedPlan;
  /** The registry cache (binaries already found while planning are taken from it). */
  cacheDir: string;
  /** Where the binaries are put; default `<cacheDir>/binaries`. */
  outDir?: string;
  registry?: Registry;
  /** Abandons the downloads (the registry's task budget also applies). */
  signal?: AbortSignal;
}

/**
 * Puts every available binary of the plan (and of the baseline plan) into a directory and returns
 * the runner's execution plan. Binaries are named by content digest, so a released binary shared
 * by both arms, or by earlier runs, is written once. Components without a binary are left out.
 */
export async function materializePlan(options: MaterializePlanOptions): Promise<ExecutionPlan> {
  const registry = (options.registry ?? (await createRegistry({ cacheDir: options.cacheDir }))).withBudget(
    options.signal ? { signal: options.signal } : {},
  );
  const outDir = options.outDir ?? join(options.cacheDir, "binaries");
  const { plan, baselinePlan } = options;
  if (baselinePlan && baselinePlan.arch !== plan.arch) {
    throw new PayloadError(
      "nothing-to-run",
      `the baseline plan is for ${baselinePlan.arch}, the PR plan for ${plan.arch}`,
    );
  }

  async function materialize(source: ResolvedPlan, component: ResolvedComponent): Promise<PlanComponent> {
    const binary = await fetchPlannedBinary({ registry, source, component, outDir });
    return {
      component: component.tag,
      binary,
      source: component.source,
      image: component.image,
      digest: component.digest!,
      ...(component.commit ? { commit: component.commit } : {}),
      ...(component.referrer ? { referrer: component.referrer } : { imagePath: component.binaryPath }),
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
    return { arm, components: await Promise.all(usable.map((c) => materialize(source, c))) };
  };

  const pr = await arm("pr", plan, () => true);
  const prTags = new Set(pr.components.map((c) => c.component));
  const arms = baselinePlan ? [pr, await arm("baseline", baselinePlan, (c) => prTags.has(c.tag))] : [pr];
  return executionPlanSchema.parse({ arch: plan.arch, arms });
}
