import type { Arch } from "../arch/arch.ts";
import type { Registry } from "../registry/create-registry.ts";
import type { ImageReference } from "../registry/image-reference.ts";
import { RegistryError } from "../registry/registry-error.ts";
import { locateImage } from "./locate-image.ts";
import type { ComponentCandidate } from "./plan-components.ts";
import type { ResolvedComponent } from "./resolved-plan.ts";

const COMMIT_LABEL = "io.openshift.build.commit.id";
const SOURCE_LABEL = "io.openshift.build.source-location";

/**
 * Reads a candidate's image for the arch and checks that its test binary is there. Whatever is
 * missing (the image, the arch, the binary) is reported in `reason`, not thrown: one broken
 * component must not hide the others. An override's commit comes from its image labels.
 */
export async function probeComponent(options: {
  registry: Registry;
  candidate: ComponentCandidate;
  arch: Arch;
  payload: ImageReference;
  /** Keep the binary in the cache (about to run it) rather than only check that it is there. */
  keepBinary?: boolean;
}): Promise<ResolvedComponent> {
  const { registry, candidate, arch } = options;
  // Keys in the order of the JSON contract, so that `plan -o json` reads the same for every component.
  const result = (fields: {
    digest: string | null;
    commit: string | null;
    sourceLocation: string | null;
    reason?: string;
  }) => ({
    tag: candidate.tag,
    image: candidate.image,
    digest: fields.digest,
    binaryPath: candidate.binaryPath,
    source: candidate.source,
    commit: fields.commit,
    sourceLocation: fields.sourceLocation,
    available: fields.reason === undefined,
    ...(fields.reason !== undefined ? { reason: fields.reason } : {}),
  });
  let { commit, sourceLocation } = candidate;
  let digest: string | null = null;
  try {
    const reference = await locateImage({ pullspec: candidate.image, payload: options.payload });
    const image = await registry.resolveImage({ reference, arch });
    digest = image.digest;
    if (candidate.source === "override" && commit === null) {
      const { labels } = await registry.readConfig(image);
      commit = labels[COMMIT_LABEL] || null;
      sourceLocation = labels[SOURCE_LABEL] || sourceLocation;
    }
    const where = { image, path: candidate.binaryPath };
    const found = options.keepBinary ? await registry.findFile(where) : await registry.lookUpFile(where);
    return result({
      digest,
      commit,
      sourceLocation,
      ...(found.found ? {} : { reason: `no test binary: ${found.reason}` }),
    });
  } catch (error) {
    if (error instanceof RegistryError)
      return result({ digest, commit, sourceLocation, reason: error.message });
    throw error;
  }
}
