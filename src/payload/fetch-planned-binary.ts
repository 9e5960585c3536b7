import type { Registry } from "../registry/create-registry.ts";
import { parseImageReference } from "../registry/image-reference.ts";
import { fetchComponentBinary } from "./fetch-component-binary.ts";
import { locateImage } from "./locate-image.ts";
import type { ResolvedComponent, ResolvedPlan } from "./resolved-plan.ts";

/** Fetches a resolved component's test binary as its plan pinned it (digest, path, referrer). */
export async function fetchPlannedBinary(options: {
  registry: Registry;
  source: ResolvedPlan;
  component: ResolvedComponent;
  outDir: string;
}): Promise<string> {
  const { registry, source, component, outDir } = options;
  const reference = await locateImage({
    pullspec: component.image,
    payload: parseImageReference(source.payload.ref),
  });
  const { binary } = await fetchComponentBinary({
    registry,
    reference,
    arch: source.arch,
    planned: {
      tag: component.tag,
      image: component.image,
      digest: component.digest!,
      binaryPath: component.binaryPath,
      ...(component.referrer ? { referrer: component.referrer } : {}),
    },
    outDir,
  });
  return binary;
}
