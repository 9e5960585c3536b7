import { z } from "zod";
import { RegistryError } from "./registry-error.ts";

export const MEDIA_TYPES = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;

/** What a manifest request accepts: both OCI and Docker v2, lists and single-platform manifests. */
export const MANIFEST_ACCEPT = Object.values(MEDIA_TYPES).join(", ");

const platformSchema = z.looseObject({
  architecture: z.string(),
  os: z.string(),
  variant: z.string().optional(),
});
export type Platform = z.infer<typeof platformSchema>;

export const descriptorSchema = z.looseObject({
  mediaType: z.string(),
  digest: z.string(),
  size: z.number().int().nonnegative(),
  platform: platformSchema.optional(),
  /** What an OCI 1.1 artifact manifest is (in a referrers list). */
  artifactType: z.string().optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type Descriptor = z.infer<typeof descriptorSchema>;

const indexSchema = z.looseObject({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  manifests: z.array(descriptorSchema),
});
const imageManifestSchema = z.looseObject({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  config: descriptorSchema,
  layers: z.array(descriptorSchema),
});

export type ImageIndex = { kind: "index"; mediaType: string; manifests: Descriptor[] };
export type ImageManifest = { kind: "image"; mediaType: string; config: Descriptor; layers: Descriptor[] };
export type Manifest = ImageIndex | ImageManifest;

/**
 * Parses manifest bytes into an index or a single-image manifest. The media type comes from the
 * document itself when it has one, else from the transport (Content-Type or the layout's descriptor).
 */
export function parseManifest(options: { bytes: Uint8Array; mediaType?: string; what: string }): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(options.bytes).toString("utf8"));
  } catch (cause) {
    throw new RegistryError("bad-response", `${options.what}: manifest is not JSON`, { cause });
  }
  const declared = (json as { mediaType?: unknown } | null)?.mediaType;
  const mediaType = typeof declared === "string" ? declared : (options.mediaType ?? "");
  const isIndex =
    mediaType === MEDIA_TYPES.ociIndex ||
    mediaType === MEDIA_TYPES.dockerList ||
    (mediaType === "" && Array.isArray((json as { manifests?: unknown }).manifests));
  const isImage =
    mediaType === MEDIA_TYPES.ociManifest ||
    mediaType === MEDIA_TYPES.dockerManifest ||
    (mediaType === "" && typeof (json as { config?: unknown }).config === "object");
  if (!isIndex && !isImage) {
    throw new RegistryError(
      "unsupported-media-type",
      `${options.what}: unsupported manifest media type "${mediaType || "(none)"}"; expected OCI or Docker v2 schema 2`,
    );
  }
  const what = `${options.what}: malformed manifest`;
  if (isIndex) {
    const index = validate(indexSchema, json, what);
    return { kind: "index", mediaType: mediaType || MEDIA_TYPES.ociIndex, manifests: index.manifests };
  }
  const image = validate(imageManifestSchema, json, what);
  return {
    kind: "image",
    mediaType: mediaType || MEDIA_TYPES.ociManifest,
    config: image.config,
    layers: image.layers,
  };
}

function validate<T extends z.ZodType>(schema: T, json: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new RegistryError("bad-response", `${what}: ${z.prettifyError(parsed.error)}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

const imageConfigSchema = z.looseObject({
  architecture: z.string(),
  os: z.string().optional(),
  variant: z.string().optional(),
  config: z.looseObject({ Labels: z.record(z.string(), z.string()).nullish() }).nullish(),
});
export type ImageConfig = {
  architecture: string;
  os?: string;
  variant?: string;
  labels: Record<string, string>;
};

/** Parses an image config blob: its platform and labels are all we need. */
export function parseImageConfig(options: { bytes: Uint8Array; what: string }): ImageConfig {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(options.bytes).toString("utf8"));
  } catch (cause) {
    throw new RegistryError("bad-response", `${options.what}: image config is not JSON`, { cause });
  }
  const { architecture, os, variant, config } = validate(
    imageConfigSchema,
    json,
    `${options.what}: malformed image config`,
  );
  return {
    architecture,
    ...(os ? { os } : {}),
    ...(variant ? { variant } : {}),
    labels: config?.Labels ?? {},
  };
}
