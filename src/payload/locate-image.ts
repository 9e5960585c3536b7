import { parseImageReference, type ImageReference } from "../registry/image-reference.ts";
import { layoutHasBlob } from "../registry/oci-layout-reader.ts";

/**
 * Where to read a component image from. A payload read from an OCI layout may carry its component
 * images in the same layout (as a mirrored release does): a pullspec pinned by a digest that the
 * layout holds is read from there; anything else from its registry.
 */
export async function locateImage(options: {
  pullspec: string;
  payload: ImageReference;
}): Promise<ImageReference> {
  const ref = parseImageReference(options.pullspec);
  const { payload } = options;
  if (
    ref.kind === "registry" &&
    ref.digest &&
    payload.kind === "oci-layout" &&
    (await layoutHasBlob(payload.dir, ref.digest))
  ) {
    return { kind: "oci-layout", dir: payload.dir, digest: ref.digest };
  }
  return ref;
}
