import { z } from "zod";
import { parseImageReference } from "../registry/image-reference.ts";
import { PayloadError } from "./payload-error.ts";

/** One payload tag as the release image lists it. */
export interface ReleaseTag {
  tag: string;
  pullspec: string;
  /** The digest the pullspec pins (manifest list digest for multi-arch payloads). */
  digest: string | null;
  commit: string | null;
  sourceLocation: string | null;
}

export interface ReleaseImageReferences {
  /** The release name (metadata.name), e.g. 4.18.0-0.nightly-2024-11-15-135718. */
  name: string;
  tags: ReleaseTag[];
}

const COMMIT = "io.openshift.build.commit.id";
const SOURCE = "io.openshift.build.source-location";

const imageStreamSchema = z.looseObject({
  kind: z.string(),
  apiVersion: z.string(),
  metadata: z.looseObject({ name: z.string().default("") }).default({ name: "" }),
  spec: z.looseObject({
    tags: z
      .array(
        z.looseObject({
          name: z.string().min(1),
          annotations: z.record(z.string(), z.string()).nullish(),
          from: z.looseObject({ kind: z.string(), name: z.string().min(1) }),
        }),
      )
      .default([]),
  }),
});

/**
 * Parses `release-manifests/image-references`: an ImageStream (image.openshift.io/v1) whose tags
 * point at the component images, annotated with the commit and repository they were built from.
 */
export function parseImageReferences(options: { text: string; source: string }): ReleaseImageReferences {
  const fail = (why: string, cause?: unknown): never => {
    throw new PayloadError("invalid-image-references", `image-references of ${options.source}: ${why}`, {
      cause,
    });
  };
  let json: unknown;
  try {
    json = JSON.parse(options.text);
  } catch (cause) {
    fail("not JSON", cause);
  }
  const head = json as { kind?: unknown; apiVersion?: unknown } | null;
  if (head?.kind !== "ImageStream" || head.apiVersion !== "image.openshift.io/v1") {
    fail(
      `expected kind ImageStream, apiVersion image.openshift.io/v1; found kind ${JSON.stringify(head?.kind)}, apiVersion ${JSON.stringify(head?.apiVersion)}`,
    );
  }
  const parsed = imageStreamSchema.safeParse(json);
  if (!parsed.success) fail(z.prettifyError(parsed.error), parsed.error);
  const stream = parsed.data!;
  const seen = new Set<string>();
  const tags = stream.spec.tags.map((entry): ReleaseTag => {
    if (seen.has(entry.name)) fail(`tag ${entry.name} appears twice`);
    seen.add(entry.name);
    if (entry.from.kind !== "DockerImage")
      fail(`tag ${entry.name} points at a ${entry.from.kind}, not a DockerImage`);
    let digest: string | null = null;
    try {
      digest = parseImageReference(entry.from.name).digest ?? null;
    } catch (cause) {
      fail(`tag ${entry.name}: ${(cause as Error).message}`, cause);
    }
    return {
      tag: entry.name,
      pullspec: entry.from.name,
      digest,
      commit: entry.annotations?.[COMMIT] || null,
      sourceLocation: entry.annotations?.[SOURCE] || null,
    };
  });
  return { name: stream.metadata.name, tags };
}
