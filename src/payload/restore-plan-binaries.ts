import { stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { Registry } from "../registry/create-registry.ts";
import { parseImageReference } from "../registry/image-reference.ts";
import type { ExecutionPlan, PlanComponent } from "@netstress/core/model/execution-plan.ts";
import { fetchComponentBinary } from "./fetch-component-binary.ts";
import { PayloadError } from "./payload-error.ts";

/**
 * Makes an execution plan made earlier runnable again: a binary that retention swept since (a
 * `more` run reuses its parent's plan, maybe days later) is fetched again from its image, pinned to
 * the planned digest, into the same content-addressed path, so the run executes exactly the
 * binaries its parent did. Returns the components it restored.
 */
export async function restorePlanBinaries(options: {
  plan: ExecutionPlan;
  registry: Registry;
}): Promise<{ restored: string[] }> {
  const { plan, registry } = options;
  const restored: string[] = [];
  const restore = async (arm: string, component: PlanComponent) => {
    const present = await stat(component.binary).then(
      () => true,
      () => false,
    );
    if (present) return;
    const binaryPath = component.referrer ? basename(component.binary) : component.imagePath;
    if (!component.image || !component.digest || !binaryPath) {
      throw new PayloadError(
        "nothing-to-run",
        `${component.component}: its binary ${component.binary} is gone and the plan does not say which image it came from; start a new run instead of extending this one`,
      );
    }
    const { binary } = await fetchComponentBinary({
      registry,
      reference: parseImageReference(component.image),
      arch: plan.arch,
      planned: {
        tag: component.component,
        image: component.image,
        digest: component.digest,
        binaryPath,
        ...(component.referrer ? { referrer: component.referrer } : {}),
      },
      outDir: dirname(dirname(component.binary)),
    });
    if (binary !== component.binary) {
      throw new PayloadError(
        "nothing-to-run",
        `${component.component}: ${component.image} holds another binary than the one planned; start a new run instead of extending this one`,
      );
    }
    restored.push(`${component.component} (${arm})`);
  };
  // One at a time: both arms may share a released binary, which must be fetched once.
  for (const { arm, components } of plan.arms)
    for (const component of components) await restore(arm, component);
  return { restored };
}
