import { readFile } from "node:fs/promises";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Registry, ResolvedImage } from "../registry/create-registry.ts";
import { formatImageReference, parseImageReference } from "../registry/image-reference.ts";
import { parseImageReferences, type ReleaseImageReferences } from "./image-references.ts";
import { PayloadError } from "./payload-error.ts";
import type { PayloadIdentity } from "./resolved-plan.ts";

export const IMAGE_REFERENCES_PATH = "/release-manifests/image-references";

export interface Release {
  identity: PayloadIdentity;
  image: ResolvedImage;
  references: ReleaseImageReferences;
}

/** Reads a release payload image for an arch and the component list it carries. */
export async function readRelease(options: {
  registry: Registry;
  reference: string;
  arch: Arch;
}): Promise<Release> {
  const ref = parseImageReference(options.reference);
  const image = await options.registry.resolveImage({ reference: ref, arch: options.arch });
  const name = formatImageReference(ref);
  const file = await options.registry.findFile({ image, path: IMAGE_REFERENCES_PATH });
  if (!file.found) {
    throw new PayloadError(
      "no-image-references",
      `${name} is not a release payload: ${file.reason.replace(/^\/release-manifests\/image-references /, `${IMAGE_REFERENCES_PATH} `)}`,
    );
  }
  const references = parseImageReferences({ text: await readFile(file.path, "utf8"), source: name });
  return {
    identity: { ref: options.reference, digest: image.indexDigest ?? image.digest, name: references.name },
    image,
    references,
  };
}
