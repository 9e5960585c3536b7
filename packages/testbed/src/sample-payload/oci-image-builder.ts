import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import type { Arch } from "@netstress/core/arch/arch.ts";

// The media types and digests the image specs define, written out here rather than taken from the
// bot's registry client: the sample payload is built the way another tool would build it, so the
// bot's reading of it is tested against a writer that shares none of its code.
const MEDIA_TYPES = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;
interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}
const sha256Digest = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** Content with its digest, ready to push to a registry or write to an OCI layout. */
export interface Blob {
  mediaType: string;
  digest: string;
  size: number;
  bytes: Buffer;
}

/** An image (or index): its top manifest, the manifests under it and every other blob it needs. */
export interface ImageBundle {
  manifest: Blob;
  /** Per-platform manifests of an index, pushed before the index itself. */
  children: Blob[];
  /** Configs and layers. */
  blobs: Blob[];
  platform?: { architecture: string; os: string; variant?: string };
}

export interface LayerEntry {
  path: string;
  content?: string | Uint8Array;
  type?: "file" | "directory" | "symlink" | "link";
  linkname?: string;
  mode?: number;
}

export type ManifestFlavour = "oci" | "docker";

export function toBlob(mediaType: string, bytes: Buffer): Blob {
  return { mediaType, digest: sha256Digest(bytes), size: bytes.length, bytes };
}

const descriptor = (b: Blob): Descriptor => ({ mediaType: b.mediaType, digest: b.digest, size: b.size });

/** A tar of the entries, gzipped unless `gzip: false` (deterministic: fixed mtimes, no gzip timestamp). */
export async function buildLayer(
  entries: readonly LayerEntry[],
  options: { gzip?: boolean; flavour?: ManifestFlavour } = {},
): Promise<Blob> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = new Promise<void>((resolve, reject) => {
    pack.on("data", (chunk: unknown) => void chunks.push(chunk as Buffer));
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  for (const entry of entries) {
    const type = entry.type ?? "file";
    const header = {
      name: entry.path,
      type,
      mode: entry.mode ?? (type === "directory" ? 0o755 : 0o644),
      mtime: new Date(0),
      ...(entry.linkname !== undefined ? { linkname: entry.linkname } : {}),
    };
    if (type === "file") pack.entry(header, Buffer.from(entry.content ?? ""));
    else pack.entry(header);
  }
  pack.finalize();
  await collected;
  const tarBytes = Buffer.concat(chunks);
  const docker = options.flavour === "docker";
  if (options.gzip === false)
    return toBlob(
      docker ? "application/vnd.docker.image.rootfs.diff.tar" : "application/vnd.oci.image.layer.v1.tar",
      tarBytes,
    );
  return toBlob(
    docker
      ? "application/vnd.docker.image.rootfs.diff.tar.gzip"
      : "application/vnd.oci.image.layer.v1.tar+gzip",
    gzipSync(tarBytes),
  );
}

/** A single-platform image from layers (bottom first), with image labels. */
export function buildImage(options: {
  arch: Arch | string;
  variant?: string;
  layers: readonly Blob[];
  labels?: Record<string, string>;
  flavour?: ManifestFlavour;
}): ImageBundle {
  const docker = options.flavour === "docker";
  const platform = {
    architecture: options.arch,
    os: "linux",
    ...(options.variant ? { variant: options.variant } : {}),
  };
  const config = toBlob(
    docker ? "application/vnd.docker.container.image.v1+json" : "application/vnd.oci.image.config.v1+json",
    Buffer.from(
      JSON.stringify({
        ...platform,
        config: { Labels: options.labels ?? {} },
        rootfs: { type: "layers", diff_ids: options.layers.map((l) => l.digest) },
      }),
    ),
  );
  const mediaType = docker ? MEDIA_TYPES.dockerManifest : MEDIA_TYPES.ociManifest;
  const manifest = toBlob(
    mediaType,
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType,
        config: descriptor(config),
        layers: options.layers.map(descriptor),
      }),
    ),
  );
  return { manifest, children: [], blobs: [config, ...options.layers], platform };
}

/** A multi-arch index (manifest list) over single-platform images. */
export function buildIndex(
  images: readonly ImageBundle[],
  options: { flavour?: ManifestFlavour } = {},
): ImageBundle {
  const mediaType = options.flavour === "docker" ? MEDIA_TYPES.dockerList : MEDIA_TYPES.ociIndex;
  const manifests = images.map((image) => ({ ...descriptor(image.manifest), platform: image.platform }));
  return {
    manifest: toBlob(mediaType, Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType, manifests }))),
    children: images.map((image) => image.manifest),
    blobs: images.flatMap((image) => image.blobs),
  };
}

/**
 * Writes images into an OCI image layout directory; each gets a `org.opencontainers.image.ref.name`
 * so that `oci:DIR:NAME` finds it. Blobs shared between images are written once.
 */
export async function writeOciLayout(options: {
  dir: string;
  images: ReadonlyArray<{ name: string; image: ImageBundle }>;
}): Promise<void> {
  const blobsDir = join(options.dir, "blobs", "sha256");
  await mkdir(blobsDir, { recursive: true });
  const all = new Map<string, Blob>();
  for (const { image } of options.images) {
    for (const b of [image.manifest, ...image.children, ...image.blobs]) all.set(b.digest, b);
  }
  for (const b of all.values()) await writeFile(join(blobsDir, b.digest.slice("sha256:".length)), b.bytes);
  const manifests = options.images.map(({ name, image }) => ({
    ...descriptor(image.manifest),
    annotations: { "org.opencontainers.image.ref.name": name },
  }));
  await writeFile(join(options.dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  await writeFile(
    join(options.dir, "index.json"),
    JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPES.ociIndex, manifests }, null, 2),
  );
}
