import { toBlob, type Blob } from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { MEDIA_TYPES } from "../../src/registry/manifest.ts";
import { pushImage } from "./oci-push-image.ts";

const EMPTY_CONFIG = toBlob("application/vnd.oci.empty.v1+json", Buffer.from("{}"));

/**
 * Attaches a one-layer OCI 1.1 artifact to a manifest, as `oras attach` does: the artifact manifest
 * (with `subject`) pushed by digest and, for registries without the referrers API (distribution
 * 2.x), listed in the index tagged `sha256-<hex>` of the referrers tag schema, unless `tagSchema`
 * is false. Returns the artifact manifest's digest.
 */
export async function pushReferrer(options: {
  url: string;
  repository: string;
  subject: Pick<Blob, "digest" | "mediaType" | "size">;
  artifactType: string;
  title: string;
  content: Uint8Array;
  layerMediaType?: string;
  tagSchema?: boolean;
}): Promise<string> {
  const layer = toBlob(options.layerMediaType ?? "application/gzip", Buffer.from(options.content));
  const manifest = toBlob(
    MEDIA_TYPES.ociManifest,
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MEDIA_TYPES.ociManifest,
        artifactType: options.artifactType,
        config: { mediaType: EMPTY_CONFIG.mediaType, digest: EMPTY_CONFIG.digest, size: EMPTY_CONFIG.size },
        layers: [
          {
            mediaType: layer.mediaType,
            digest: layer.digest,
            size: layer.size,
            annotations: { "org.opencontainers.image.title": options.title },
          },
        ],
        subject: {
          mediaType: options.subject.mediaType,
          digest: options.subject.digest,
          size: options.subject.size,
        },
      }),
    ),
  );
  const { url, repository } = options;
  await pushImage({
    url,
    repository,
    tag: manifest.digest,
    image: { manifest, children: [], blobs: [EMPTY_CONFIG, layer] },
  });
  if (options.tagSchema === false) return manifest.digest;
  const tag = options.subject.digest.replace(":", "-");
  const existing = await fetch(`${url}/v2/${repository}/manifests/${tag}`, {
    headers: { accept: MEDIA_TYPES.ociIndex },
  });
  const listed = existing.ok ? ((await existing.json()) as { manifests: object[] }).manifests : [];
  const index = toBlob(
    MEDIA_TYPES.ociIndex,
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MEDIA_TYPES.ociIndex,
        manifests: [
          ...listed,
          {
            mediaType: manifest.mediaType,
            digest: manifest.digest,
            size: manifest.size,
            artifactType: options.artifactType,
          },
        ],
      }),
    ),
  );
  await pushImage({ url, repository, tag, image: { manifest: index, children: [], blobs: [] } });
  return manifest.digest;
}
