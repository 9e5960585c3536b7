import { z } from "zod";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { binarySourceSchema } from "@netstress/core/model/result-record.ts";

const payloadIdentitySchema = z.object({
  /** The reference as given. */
  ref: z.string(),
  /** Digest of what the reference pointed at (the index for a multi-arch payload). */
  digest: z.string(),
  /** The release name from image-references. */
  name: z.string(),
});

/** A test image as `<registry>/<name>:<version>`, and where the extension wants it mirrored (`mapped`). */
const testImageSchema = z.object({ image: z.string(), mapped: z.string().optional() });
export type TestImage = z.infer<typeof testImageSchema>;

export const resolvedComponentSchema = z.object({
  tag: z.string(),
  /** Pullspec the binary comes from: the payload's, or the override's. */
  image: z.string(),
  /** Digest of the image for this arch; null when the image could not be read. */
  digest: z.string().nullable(),
  binaryPath: z.string(),
  source: binarySourceSchema,
  commit: z.string().nullable(),
  sourceLocation: z.string().nullable(),
  available: z.boolean(),
  /**
   * How the component was found: a tests-extension referrer artifact of its image, its binary at
   * the path the table gives ("table") or at the conventional path of a tag no table lists
   * ("convention"), or an ImageStream tag's annotations ("imagestream"). Absent in plans written
   * before discovery existed.
   */
  discoveredBy: z.enum(["referrer", "convention", "table", "imagestream"]).optional(),
  /** Digest of the referrer artifact the binary comes from, when it comes from one. */
  referrer: z.string().optional(),
  /** `namespace/name:tag` of the ImageStream tag that names a non-payload extension. */
  imageStreamTag: z.string().optional(),
  /** Arguments the ImageStream's binary annotation puts ahead of the OTE verbs. */
  binaryArgs: z.array(z.string()).optional(),
  /** Another digest than the baseline payload's, built from the same commit: so it runs as released. */
  rebuiltFromSameSource: z.boolean().optional(),
  /** Why the binary cannot be used (no such arch, no binary at the path, image missing …). */
  reason: z.string().optional(),
  /** With `plan --images`: the binary's own `info` source (its build commit and tree state). */
  binarySource: z.object({ commit: z.string(), gitTreeState: z.string() }).optional(),
  /** With `plan --images`: the images the component's tests use (`<bin> images`), once each. */
  images: z.array(testImageSchema).optional(),
  /** With `plan --images`: why the binary's images (or info) could not be read. */
  imagesNote: z.string().optional(),
});
export type ResolvedComponent = z.infer<typeof resolvedComponentSchema>;

/**
 * The JSON contract of `netstress plan -o json`: for every discovered component, which binary
 * runs for this arch and where it comes from. `baseline` is present when a baseline payload was given.
 */
export const resolvedPlanSchema = z.object({
  payload: payloadIdentitySchema,
  baseline: payloadIdentitySchema.optional(),
  arch: archSchema,
  components: z.array(resolvedComponentSchema),
});
export type ResolvedPlan = z.infer<typeof resolvedPlanSchema>;
export type PayloadIdentity = z.infer<typeof payloadIdentitySchema>;
