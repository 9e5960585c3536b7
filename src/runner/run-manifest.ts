import { z } from "zod";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { oteEnvironmentSchema } from "@netstress/core/model/ote-environment.ts";
import { aloneReasonSchema, armSchema, binarySourceSchema } from "@netstress/core/model/result-record.ts";

const countSchema = z.number().int().nonnegative();

/**
 * run.json beside results.jsonl: what ran (which binary from where), with which settings, and
 * whether the run finished. Reports read it to show the plan; a cancelled run says so here.
 */
export const runManifestSchema = z.object({
  status: z.enum(["running", "completed", "cancelled", "failed"]),
  arch: archSchema,
  seed: z.string(),
  iterations: z.number().int().nonnegative(),
  firstIteration: z.number().int().nonnegative(),
  parallel: z.number().int().positive(),
  retries: z.number().int().nonnegative(),
  timeoutMs: z.number().int().positive(),
  networkParallel: z.number().int().positive().optional(),
  focus: z.string().optional(),
  suite: z.string().optional(),
  /** What the suite's definition said (iterations, parallel and timeoutMs follow it unless given). */
  suiteSettings: z
    .object({
      count: z.number().optional(),
      parallelism: z.number().optional(),
      testTimeoutMs: z.number().optional(),
      disruptive: z.boolean().optional(),
    })
    .optional(),
  includeDisruptive: z.boolean().optional(),
  /** The environment given to `list` and to environmentSelectors, and where it came from. */
  environment: oteEnvironmentSchema.optional(),
  environmentSource: z.enum(["cluster", "flags", "cluster+flags", "none"]).optional(),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  /** Why the run stopped early (signal name or error). */
  reason: z.string().optional(),
  executions: z.object({ total: z.number(), done: z.number(), records: z.number() }).optional(),
  components: z.array(
    z.object({
      arm: armSchema,
      component: z.string(),
      binary: z.string(),
      sha256: z.string(),
      source: binarySourceSchema.optional(),
      image: z.string().optional(),
      digest: z.string().optional(),
      commit: z.string().optional(),
      /** The binary's own `info` (source commit, build date), when it answered. */
      info: z.unknown().optional(),
      tests: z.number().int().nonnegative(),
      /** Spec lines of `list` that could not be read, so those specs are missing from the plan. */
      listWarnings: z.array(z.string()).optional(),
      /** Listed tests each filter left out. */
      excluded: z
        .object({ environment: countSchema, suite: countSchema, disruptive: countSchema, focus: countSchema })
        .optional(),
      /** Selected tests that ran with nothing beside them, and why. */
      alone: z.array(z.object({ name: z.string(), reason: aloneReasonSchema })).optional(),
      /** What the binary wrote to its EXTENSION_ARTIFACT_DIR, relative to the output directory. */
      artifacts: z
        .object({
          dir: z.string(),
          files: z.array(z.object({ path: z.string(), bytes: countSchema })),
          omitted: countSchema,
        })
        .optional(),
    }),
  ),
});
export type RunManifest = z.infer<typeof runManifestSchema>;
