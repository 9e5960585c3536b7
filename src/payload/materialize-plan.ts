import { copyFile, link, mkdir, stat, utimes } from "node:fs/promises";
import { basename, join } from "node:path";
import { createRegistry, type Registry } from "../registry/create-registry.ts";
import { parseImageReference, withDigest } from "../registry/image-reference.ts";
import { sha256Hex } from "../registry/digest.ts";
import type { Arm } from "../runner/result-record.ts";
import { executionPlanSchema, type ExecutionPlan, type PlanComponent } from "../runner/execution-plan.ts";
import { locateImage } from "./locate-image.ts";
import { TESTS_EXTENSION_ARTIFACT } from "./probe-component.ts";
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
    const located = await locateImage({
      pullspec: component.image,
      payload: parseImageReference(source.payload.ref),
    });
    // A pullspec pinned by digest resolves from the cache as it did when planning; a tag may have
    // moved since, so it is pinned to the digest that was planned.
    const reference = located.digest ? located : withDigest(located, component.digest!);
    const image = await registry.resolveImage({ reference, arch: source.arch });
    if (image.digest !== component.digest) {
      throw new PayloadError(
        "nothing-to-run",
        `${component.tag}: ${component.image} is ${image.digest} for ${source.arch} now, not ${component.digest} as planned`,
      );
    }
    const found = component.referrer
      ? await registry.findReferrerFile({
          image,
          ...TESTS_EXTENSION_ARTIFACT,
          title: basename(component.binaryPath),
        })
      : await registry.findFile({ image, path: component.binaryPath });
    if (found.found && "referrer" in found && found.referrer !== component.referrer) {
      throw new PayloadError(
        "nothing-to-run",
        `${component.tag}: the binary's referrer is ${found.referrer} now, not ${component.referrer} as planned`,
      );
    }
    if (!found.found) {
      throw new PayloadError(
        "nothing-to-run",
        `${component.tag}: the binary the plan found is gone: ${found.reason}`,
      );
    }
    const dir = join(outDir, sha256Hex(found.digest).slice(0, 32));
    const target = join(dir, basename(component.binaryPath));
    const exists = await stat(target).then(
      (info) => info.size === found.size,
      () => false,
    );
    if (!exists) {
      await mkdir(dir, { recursive: true });
      // A hard link costs nothing; across file systems, copy. The cache keeps a linked blob until
      // retention removes this link (sweepDataDir), when evicting it frees its space.
      await link(found.path, target).catch(() => copyFile(found.path, target));
    } else {
      // Marks the binary used, so that retention keeps it while runs still use it.
      const now = new Date();
      await utimes(target, now, now).catch(() => {});
    }
    return {
      component: component.tag,
      binary: target,
      source: component.source,
      image: component.image,
      digest: image.digest,
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
