import { sha256Digest } from "./digest.ts";
import { RegistryError } from "./registry-error.ts";

/** A layer to put on top of an image: its descriptor and the digest of its uncompressed tar. */
export interface AppendedLayer {
  mediaType: string;
  digest: string;
  size: number;
  diffId: string;
}

/** Content with its digest, as a registry stores it. */
export interface ContentBlob {
  mediaType: string;
  digest: string;
  size: number;
  bytes: Buffer;
}

type Json = Record<string, unknown>;

function parseObject(bytes: Buffer, what: string): Json {
  try {
    const value: unknown = JSON.parse(bytes.toString("utf8"));
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Json;
  } catch (cause) {
    throw new RegistryError("bad-response", `${what} is not JSON`, { cause });
  }
  throw new RegistryError("bad-response", `${what} is not a JSON object`);
}

const blob = (mediaType: string, document: Json): ContentBlob => {
  const bytes = Buffer.from(JSON.stringify(document));
  return { mediaType, digest: sha256Digest(bytes), size: bytes.length, bytes };
};

/**
 * The image with one more layer on top, as `oc adm release new` and every image builder make it:
 * the config gains the layer's diff id (and a history entry when it keeps a history), the manifest
 * the layer and the new config. Every other field of both documents is kept as it was. Pure.
 */
export function appendLayer(options: {
  manifest: { mediaType: string; bytes: Buffer };
  config: { mediaType: string; bytes: Buffer };
  layer: AppendedLayer;
  /** What the history entry says made the layer. */
  createdBy: string;
  what: string;
}): { manifest: ContentBlob; config: ContentBlob } {
  const config = parseObject(options.config.bytes, `image config of ${options.what}`);
  const rootfs = (config.rootfs ?? {}) as Json;
  const diffIds = Array.isArray(rootfs.diff_ids) ? (rootfs.diff_ids as unknown[]) : [];
  const history = Array.isArray(config.history) ? (config.history as unknown[]) : undefined;
  const newConfig = blob(options.config.mediaType, {
    ...config,
    rootfs: { type: "layers", ...rootfs, diff_ids: [...diffIds, options.layer.diffId] },
    ...(history ? { history: [...history, { created_by: options.createdBy }] } : {}),
  });
  const manifest = parseObject(options.manifest.bytes, `manifest of ${options.what}`);
  const layers = Array.isArray(manifest.layers) ? (manifest.layers as unknown[]) : [];
  const { mediaType, digest, size } = options.layer;
  const newManifest = blob(options.manifest.mediaType, {
    ...manifest,
    config: {
      ...(manifest.config as Json),
      digest: newConfig.digest,
      size: newConfig.size,
    },
    layers: [...layers, { mediaType, digest, size }],
  });
  return { manifest: newManifest, config: newConfig };
}
