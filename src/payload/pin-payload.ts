import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Registry } from "../registry/create-registry.ts";
import { formatImageReference, withDigest } from "../registry/image-reference.ts";
import { RegistryError } from "../registry/registry-error.ts";
import { PayloadError } from "./payload-error.ts";

/**
 * The payload a pullspec names now, pinned to its digest (the index's, for a multi-arch payload:
 * what a cluster installed from it reports), read through the bot's guarded registry client — its
 * allow-list and address rules apply — and checked to have a build for `arch`. Tags move; a run
 * compares, installs and records only what this returns.
 */
export async function pinPayload(options: {
  registry: Registry;
  pullspec: string;
  arch: Arch;
  /** What the payload is to the run, for the message (e.g. "the baseline payload"). */
  what: string;
}): Promise<string> {
  const { registry, pullspec, arch, what } = options;
  try {
    const image = await registry.resolveImage({ reference: pullspec, arch });
    return formatImageReference(withDigest(image.reference, image.indexDigest ?? image.digest));
  } catch (error) {
    if (!(error instanceof RegistryError)) throw error;
    throw new PayloadError(
      "unresolved-payload",
      `${what} ${pullspec} cannot be resolved to a digest: ${error.message}`,
      { cause: error },
    );
  }
}
