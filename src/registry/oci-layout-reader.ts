import { createReadStream } from "node:fs";
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { sha256Digest, sha256Hex } from "./digest.ts";
import type { RawManifest } from "./distribution-client.ts";
import { formatImageReference, type LayoutImageReference } from "./image-reference.ts";
import { MEDIA_TYPES, parseManifest, type Descriptor } from "./manifest.ts";
import { RegistryError } from "./registry-error.ts";

const REF_NAME = "org.opencontainers.image.ref.name";

export function layoutBlobPath(dir: string, digest: string): string {
  return join(dir, "blobs", "sha256", sha256Hex(digest));
}

async function readBlob(dir: string, digest: string, what: string): Promise<Buffer> {
  return readFile(layoutBlobPath(dir, digest)).catch((cause: NodeJS.ErrnoException) => {
    throw new RegistryError(
      cause.code === "ENOENT" ? "not-found" : "unavailable",
      `${what}: blob ${digest} is not in the OCI layout ${dir}`,
      { cause },
    );
  });
}

/**
 * Reads manifests of an OCI image layout. A tag is matched against the
 * `org.opencontainers.image.ref.name` annotations of index.json; without a tag, a layout holding
 * one image means that image, and one holding per-platform manifests is read as an index itself.
 */
export async function readLayoutManifest(ref: LayoutImageReference): Promise<RawManifest> {
  const what = `manifest of ${formatImageReference(ref)}`;
  if (ref.digest) {
    const bytes = await readBlob(ref.dir, ref.digest, what);
    return { digest: ref.digest, mediaType: "", bytes };
  }
  const indexBytes = await readFile(join(ref.dir, "index.json")).catch((cause: NodeJS.ErrnoException) => {
    throw new RegistryError(
      "not-found",
      `${what}: ${ref.dir} is not an OCI image layout (no readable index.json)`,
      { cause },
    );
  });
  const index = parseManifest({
    bytes: indexBytes,
    mediaType: MEDIA_TYPES.ociIndex,
    what: `${ref.dir}/index.json`,
  });
  if (index.kind !== "index")
    throw new RegistryError("bad-response", `${ref.dir}/index.json is not an image index`);
  let chosen: Descriptor | undefined;
  if (ref.tag) {
    chosen = index.manifests.find((m) => m.annotations?.[REF_NAME] === ref.tag);
    if (!chosen) {
      const names = index.manifests.map((m) => m.annotations?.[REF_NAME]).filter(Boolean);
      throw new RegistryError(
        "not-found",
        `${what}: no image named "${ref.tag}" in the layout; it has ${names.length ? names.join(", ") : "no named images"}`,
      );
    }
  } else if (index.manifests.length === 1) {
    chosen = index.manifests[0];
  } else if (index.manifests.every((m) => m.platform)) {
    return { digest: sha256Digest(indexBytes), mediaType: MEDIA_TYPES.ociIndex, bytes: indexBytes };
  } else {
    throw new RegistryError(
      "invalid-reference",
      `${what}: the layout holds ${index.manifests.length} images; name one with oci:DIR:NAME`,
    );
  }
  const bytes = await readBlob(ref.dir, chosen!.digest, what);
  return { digest: chosen!.digest, mediaType: chosen!.mediaType, bytes };
}

/** A blob of the layout as a stream (the caller verifies its digest while reading). */
export async function openLayoutBlob(ref: LayoutImageReference, digest: string): Promise<Readable> {
  const path = layoutBlobPath(ref.dir, digest);
  await access(path).catch((cause: unknown) => {
    throw new RegistryError("not-found", `blob ${digest} is not in the OCI layout ${ref.dir}`, { cause });
  });
  return createReadStream(path);
}

/** Whether the layout holds a blob, e.g. a component image that a layout payload carries along. */
export async function layoutHasBlob(dir: string, digest: string): Promise<boolean> {
  return access(layoutBlobPath(dir, digest)).then(
    () => true,
    () => false,
  );
}
