import { z } from "zod";
import { descriptorSchema, type Descriptor } from "./manifest.ts";
import { RegistryError } from "./registry-error.ts";

/** An OCI 1.1 artifact manifest: what it is, what it refers to, and its layers. */
export interface ArtifactManifest {
  artifactType: string | undefined;
  subject: string | undefined;
  layers: Descriptor[];
}

const artifactManifestSchema = z.looseObject({
  schemaVersion: z.literal(2),
  artifactType: z.string().optional(),
  config: descriptorSchema.optional(),
  subject: descriptorSchema.optional(),
  layers: z.array(descriptorSchema).default([]),
});

/**
 * Parses a referrer's manifest. The artifact type is the manifest's `artifactType`, or, as OCI 1.1
 * allows for artifacts packed as images, the config's media type.
 */
export function parseArtifactManifest(options: { bytes: Uint8Array; what: string }): ArtifactManifest {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(options.bytes).toString("utf8"));
  } catch (cause) {
    throw new RegistryError("bad-response", `${options.what}: manifest is not JSON`, { cause });
  }
  const parsed = artifactManifestSchema.safeParse(json);
  if (!parsed.success) {
    throw new RegistryError(
      "bad-response",
      `${options.what}: malformed artifact manifest: ${z.prettifyError(parsed.error)}`,
      { cause: parsed.error },
    );
  }
  const { artifactType, config, subject, layers } = parsed.data;
  return { artifactType: artifactType ?? config?.mediaType, subject: subject?.digest, layers };
}
