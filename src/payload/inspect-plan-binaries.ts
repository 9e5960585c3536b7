import { join } from "node:path";
import type { Registry } from "../registry/create-registry.ts";
import { parseImageReference } from "../registry/image-reference.ts";
import { describeBinary, type BinaryDescription } from "./describe-binary.ts";
import { fetchComponentBinary } from "./fetch-component-binary.ts";
import { locateImage } from "./locate-image.ts";
import { rebuiltFromSameSource } from "./rebuilt-from-same-source.ts";
import type { ResolvedComponent, ResolvedPlan } from "./resolved-plan.ts";

/**
 * Extracts every available binary of a plan (through the content cache, as materializePlan does)
 * and asks each `info` and `images`: the plan then lists each component's test images and its
 * binary's source. An override whose released counterpart (same tag in `releasedPlan`, another
 * digest) has a binary built from the same clean commit is "rebuilt, same source" and runs as
 * released; one whose binaries differ, or either was built from a dirty tree, is the PR's,
 * whatever the image labels said.
 */
export async function inspectPlanBinaries(options: {
  plan: ResolvedPlan;
  /** The released components: the baseline payload's, or the payload's without overrides. */
  releasedPlan?: ResolvedPlan;
  registry: Registry;
  cacheDir: string;
  env?: NodeJS.ProcessEnv;
}): Promise<ResolvedPlan> {
  const { registry, cacheDir } = options;
  const outDir = join(cacheDir, "binaries");

  const describe = async (
    source: ResolvedPlan,
    component: ResolvedComponent,
    images: boolean,
  ): Promise<BinaryDescription> => {
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
    return describeBinary({
      binary,
      cacheDir,
      arch: source.arch,
      images,
      ...(options.env ? { env: options.env } : {}),
    });
  };

  const released = new Map(
    (options.releasedPlan?.components ?? [])
      .filter((c) => c.available && c.digest !== null)
      .map((c) => [c.tag, c]),
  );
  const inspect = async (component: ResolvedComponent): Promise<ResolvedComponent> => {
    if (!component.available || component.digest === null) return component;
    const counterpart = released.get(component.tag);
    const compared =
      (component.source === "override" || component.rebuiltFromSameSource) &&
      counterpart !== undefined &&
      counterpart.digest !== component.digest;
    const [own, theirs] = await Promise.all([
      describe(options.plan, component, true),
      compared ? describe(options.releasedPlan!, counterpart, false) : undefined,
    ]);
    const { rebuiltFromSameSource: _labelSaid, ...rest } = component;
    const sameSource = theirs !== undefined && rebuiltFromSameSource(own, theirs);
    return {
      ...rest,
      ...(theirs !== undefined ? { source: sameSource ? "released" : "override" } : {}),
      ...((theirs !== undefined ? sameSource : component.rebuiltFromSameSource)
        ? { rebuiltFromSameSource: true }
        : {}),
      ...(own.source ? { binarySource: own.source } : {}),
      ...(own.images ? { images: own.images } : {}),
      ...(own.note ? { imagesNote: own.note } : {}),
    };
  };
  return { ...options.plan, components: await Promise.all(options.plan.components.map(inspect)) };
}
