import { stat } from "node:fs/promises";
import type { ExecutionPlan, PlanComponent } from "@netstress/core/model/execution-plan.ts";
import type { Registry } from "../registry/create-registry.ts";
import { parseImageReference, type ImageReference } from "../registry/image-reference.ts";
import { fetchComponentBinary } from "./fetch-component-binary.ts";
import { PayloadError } from "./payload-error.ts";

/**
 * Makes a plan runnable on this machine: each component whose binary is not a file here yet (the
 * plan names only its image, or retention swept the file since an earlier run) gets its binary
 * fetched from its image for the plan's arch, pinned to the planned digest, through the registry's
 * content cache into `<outDir>/<content digest>/`. A binary both arms share is fetched once.
 */
export async function fetchPlanBinaries(options: {
  plan: ExecutionPlan;
  registry: Registry;
  outDir: string;
}): Promise<ExecutionPlan> {
  const { plan, registry, outDir } = options;
  const fetches = new Map<string, Promise<string>>();
  const fetchOnce = (component: PlanComponent & { image: string; digest: string; imagePath: string }) => {
    const key = [
      component.layout,
      component.image,
      component.digest,
      component.imagePath,
      component.referrer,
    ].join("\0");
    let pending = fetches.get(key);
    if (!pending) {
      pending = fetchComponentBinary({
        registry,
        reference: imageOf(component),
        arch: plan.arch,
        planned: {
          tag: component.component,
          image: component.image,
          digest: component.digest,
          binaryPath: component.imagePath,
          ...(component.referrer ? { referrer: component.referrer } : {}),
        },
        outDir,
      }).then((fetched) => fetched.binary);
      fetches.set(key, pending);
    }
    return pending;
  };
  const runnable = async (component: PlanComponent): Promise<PlanComponent> => {
    const present =
      component.binary !== undefined &&
      (await stat(component.binary).then(
        () => true,
        () => false,
      ));
    if (present) return component;
    const { image, digest, imagePath } = component;
    if (!image || !digest || !imagePath) {
      throw new PayloadError(
        "nothing-to-run",
        `${component.component}: ${component.binary === undefined ? "the plan names no binary" : `its binary ${component.binary} is not there`}, and no image (by digest and path) to fetch it from`,
      );
    }
    return { ...component, binary: await fetchOnce({ ...component, image, digest, imagePath }) };
  };
  const arms = await Promise.all(
    plan.arms.map(async (arm) => ({ ...arm, components: await Promise.all(arm.components.map(runnable)) })),
  );
  return { ...plan, arms };
}

/** Where the component image is read from: the layout that holds it, else its pullspec. */
function imageOf(component: { image: string; layout?: string }): ImageReference {
  const reference = parseImageReference(component.image);
  return component.layout
    ? { kind: "oci-layout", dir: component.layout, ...(reference.digest ? { digest: reference.digest } : {}) }
    : reference;
}
