import { z } from "zod";
import { archSchema } from "../arch/arch.ts";
import { armSchema, binarySourceSchema } from "./result-record.ts";

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
  focus: z.string().optional(),
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
    }),
  ),
});
export type RunManifest = z.infer<typeof runManifestSchema>;
