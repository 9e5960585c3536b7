import { join } from "node:path";
import type { Registry } from "../registry/create-registry.ts";
import { RegistryError } from "../registry/registry-error.ts";
import { describeBinary, type BinaryDescription } from "./describe-binary.ts";
import { fetchPlannedBinary } from "./fetch-planned-binary.ts";
import { PayloadError } from "./payload-error.ts";
import { rebuiltFromSameSource } from "./rebuilt-from-same-source.ts";
import type { ResolvedComponent, ResolvedPlan } from "./resolved-plan.ts";

const ABANDONED: ReadonlySet<string> = new Set(["deadline-exceeded", "budget-exceeded"]);

/** A binary that cannot be fetched (the tag moved since planning, a layer is gone) is a note, not a failed plan. */
async function describeOrSay(describe: () => Promise<BinaryDescription>): Promise<BinaryDescription> {
  try {
    return await describe();
  } catch (error) {
    // A spent budget ends the whole plan, as it does while planning.
    const reportable =
      error instanceof PayloadError || (error instanceof RegistryError && !ABANDONED.has(error.code));
    if (!reportable) throw error;
    return { note: error.message };
  }
}

/**
 * Extracts every available binary of a plan (through the content cache, as fetchPlanBinaries does)
 * and asks each `info` and `images`: the plan then lists each component's test images and its
 * binary's source. An override whose released counterpart (same tag in `releasedPlan`, another
 * digest) has a binary built from the same clean commit is "rebuilt, same source" and runs as
 * released; one whose binaries differ, or either was built from a dirty tree, is the PR's,
 * whatever the image labels said. When either binary cannot say (no `info`, not fetched), the
 * labels' verdict stands and `imagesNote` says why.
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
    const binary = await fetchPlannedBinary({ registry, source, component, outDir });
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
      describeOrSay(() => describe(options.plan, component, true)),
      compared ? describeOrSay(() => describe(options.releasedPlan!, counterpart, false)) : undefined,
    ]);
    // Both binaries must say where they come from; otherwise the image labels' verdict stands.
    const decided = own.source && theirs?.source ? rebuiltFromSameSource(own, theirs) : undefined;
    const { rebuiltFromSameSource: labelsSaid, ...rest } = component;
    const notes = [own.note, theirs?.note && `the released binary: ${theirs.note}`].filter(Boolean);
    return {
      ...rest,
      ...(decided !== undefined ? { source: decided ? "released" : "override" } : {}),
      ...((decided ?? labelsSaid) ? { rebuiltFromSameSource: true } : {}),
      ...(own.source ? { binarySource: own.source } : {}),
      ...(own.images ? { images: own.images } : {}),
      ...(notes.length > 0 ? { imagesNote: notes.join("; ") } : {}),
    };
  };
  return { ...options.plan, components: await Promise.all(options.plan.components.map(inspect)) };
}
