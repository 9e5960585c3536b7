import { z } from "zod";
import { archSchema } from "../arch/arch.ts";
import { BASELINES } from "../commands/command.ts";
import { executionPlanSchema } from "../runner/execution-plan.ts";

export const RUN_STATES = ["queued", "waiting-for-images", "running", "analyzing", "completed"] as const;
export type RunState = (typeof RUN_STATES)[number];

/** GitHub check-run conclusions a run can end with. */
export const CONCLUSIONS = [
  "success",
  "failure",
  "neutral",
  "cancelled",
  "timed_out",
  "action_required",
] as const;
export type Conclusion = (typeof CONCLUSIONS)[number];

export const TRIGGERS = ["comment", "pull_request", "ok-to-test", "rerun", "more", "retest"] as const;

const outputSchema = z.object({ title: z.string(), summary: z.string(), text: z.string().optional() });
export type CheckRunOutput = z.infer<typeof outputSchema>;

/** Results of earlier iterations that count toward this run (`more` builds on a finished run). */
const shardResultSchema = z.object({
  id: z.string(),
  resultsPath: z.string(),
  first: z.number().int().nonnegative(),
  count: z.number().int().positive(),
  /** Iterations the infrastructure kept losing: not in the results. */
  lost: z.array(z.object({ iteration: z.number().int().nonnegative(), reason: z.string() })).optional(),
});
export type ShardResult = z.infer<typeof shardResultSchema>;

/**
 * One stress run: one PR head commit, one architecture, one check run. Stored in Redis as JSON and
 * parsed on every read; `revision` increases with every change (optimistic concurrency).
 */
export const runRecordSchema = z.object({
  id: z.string(),
  /** Runs started by the same trigger (one per arch) share it. */
  requestId: z.string(),
  installationId: z.number().int(),
  owner: z.string(),
  repo: z.string(),
  pr: z.number().int().positive(),
  headSha: z.string(),
  arch: archSchema,
  options: z.object({
    iterations: z.number().int().positive(),
    baseline: z.enum(BASELINES),
    focus: z.string().optional(),
  }),
  /** What of the repository's configuration the run needs (read from the default branch). */
  source: z.object({
    tags: z.array(z.string()),
    prImage: z.string().optional(),
    payload: z.string().optional(),
    releaseStream: z.string().optional(),
    /** Absent in runs recorded before repositories could require capabilities. */
    capabilities: z.array(z.string()).optional(),
    parallel: z.number().int().positive(),
    timeoutMinutes: z.number().int().positive(),
    imageWaitMinutes: z.number().int().nonnegative(),
  }),
  trigger: z.object({ kind: z.enum(TRIGGERS), actor: z.string(), deliveryId: z.string() }),
  /** Same PR, SHA, arch and options: while one such run is active, it is the run. */
  dedupeKey: z.string(),
  parentRunId: z.string().optional(),
  /** This run's iterations are firstIteration … firstIteration + iterations - 1 (0 unless `more`). */
  firstIteration: z.number().int().nonnegative(),
  /** Finished shards: inherited from the parent first, then this run's own. */
  shards: z.array(shardResultSchema),
  state: z.enum(RUN_STATES),
  conclusion: z.enum(CONCLUSIONS).optional(),
  /** Why the run ended the way it did, in words for the check run. */
  reason: z.string().optional(),
  output: outputSchema.optional(),
  plan: executionPlanSchema.optional(),
  progress: z.object({ done: z.number(), total: z.number(), failed: z.number() }).optional(),
  imageWait: z
    .object({ since: z.string(), attempts: z.number().int(), missing: z.array(z.string()), next: z.string() })
    .optional(),
  checkRunId: z.number().int().optional(),
  reportPath: z.string().optional(),
  revision: z.number().int().nonnegative(),
  createdAt: z.string(),
  updatedAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

export function isActive(run: RunRecord): boolean {
  return run.state !== "completed";
}
