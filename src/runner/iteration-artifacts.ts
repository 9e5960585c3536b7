import { z } from "zod";
import { armSchema } from "@netstress/core/model/result-record.ts";

/** A file a test binary wrote, or why one is not there. */
export const omittedArtifactSchema = z.object({
  arm: armSchema.optional(),
  component: z.string().optional(),
  /** Relative to the component's artifact directory, when known. */
  path: z.string().optional(),
  /** Bytes of the file, when known. */
  size: z.number().int().nonnegative().optional(),
  reason: z.string(),
});
export type OmittedArtifact = z.infer<typeof omittedArtifactSchema>;

/**
 * What an iteration run on a build farm left in its components' EXTENSION_ARTIFACT_DIRs, as the
 * collector kept it: `<shard dir>/artifacts/iteration-<n>.json`, beside the iteration's directory
 * `<shard dir>/artifacts/iteration-<n>/`, where each file is `<arm>/<component>/<path>`.
 */
export const iterationArtifactsSchema = z.object({
  iteration: z.number().int().nonnegative(),
  files: z.array(
    z.object({
      arm: armSchema,
      component: z.string(),
      /** Relative to the component's artifact directory. */
      path: z.string(),
      bytes: z.number().int().nonnegative(),
    }),
  ),
  /** Files that did not reach the bot, and why (over a budget, a cut log, a refused path …). */
  omitted: z.array(omittedArtifactSchema),
});
export type IterationArtifacts = z.infer<typeof iterationArtifactsSchema>;

/** The index file of an iteration's artifacts, relative to the shard's directory. */
export const iterationArtifactsIndex = (iteration: number) => `artifacts/iteration-${iteration}.json`;
/** The directory of an iteration's artifacts, relative to the shard's directory. */
export const iterationArtifactsDir = (iteration: number) => `artifacts/iteration-${iteration}`;
