import { clusterCountSchema } from "../config/cluster-count.ts";
import { z } from "zod";
import { GATE_VERDICTS } from "../analysis/gate-verdict.ts";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { capabilitySchema } from "../config/capability.ts";
import { streamNameSchema } from "../config/stream-name.ts";
import { runPowerSchema } from "../runs/run-record.ts";
import type { UpgradingPhase } from "../runs/upgrading-phase.ts";

const pullspecSchema = z
  .string()
  .min(1)
  .max(1000)
  .regex(/^[^\s]+$/, "a payload pullspec without spaces")
  .refine(
    (text) => !text.toLowerCase().startsWith("oci:"),
    "local OCI layouts (oci:…) are for the bot's operator only",
  );

/** Most iterations one gate may ask for per arch. */
export const MAX_GATE_ITERATIONS = 1000;

export const gateRequestSchema = z.strictObject({
  payload: pullspecSchema.describe("The candidate release payload's pullspec (by digest, ideally)."),
  baselinePayload: pullspecSchema
    .optional()
    .describe(
      "The payload to compare with; by default the stream's latest payload from the release-controller.",
    ),
  stream: streamNameSchema.describe(
    "The release stream the candidate belongs to; its history pool is fed by the gate.",
  ),
  arches: z
    .array(archSchema)
    .min(1)
    .refine((arches) => new Set(arches).size === arches.length, "each arch at most once")
    .describe("Architectures to gate; each gets its own run and verdict."),
  iterations: z
    .number()
    .int()
    .min(1)
    .max(MAX_GATE_ITERATIONS)
    .describe("Iterations per arm and arch; fewer than 6 can only ever be Inconclusive."),
  capabilities: z
    .array(capabilitySchema)
    .max(16)
    .optional()
    .describe(
      "Build-farm capabilities the gate's shards need beyond their arch (e.g. ipv6); only farm clusters offering all of them take them.",
    ),
  clusters: clusterCountSchema.optional(),
});
export type GateRequest = z.infer<typeof gateRequestSchema>;

export const ARM_STATES = ["queued", "resolving", "running", "analyzing", "completed"] as const;
export const GATE_STATES = ["queued", "running", "completed"] as const;

const progressSchema = z.object({
  done: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});

const upgradingSchema = z.object({
  batch: z.number().int().positive().describe("The batch (1-based) whose candidate half waits for them."),
  since: z.string().describe("When the upgrades started."),
  payload: z.string().optional().describe("The payload they move to: the candidate."),
  clusters: z
    .array(z.object({ id: z.string(), state: z.enum(["upgrading", "upgraded", "failed"]) }))
    .describe("Each cluster as far as it got; a failed one is given back and the half runs on the others."),
  line: z.string().describe("The same in words, as a PR run's check run says it."),
}) satisfies z.ZodType<UpgradingPhase>;

/** One arch of a gate, as stored and as the API shows it. */
export const gateArchSchema = z.object({
  arch: archSchema,
  state: z.enum(ARM_STATES),
  verdict: z.enum(GATE_VERDICTS).optional(),
  reasons: z.array(z.string()).describe("Why the verdict is what it is, most important first."),
  reportUrl: z.url().optional().describe("The HTML report of this arch's run."),
  progress: progressSchema.optional(),
  upgrading: upgradingSchema
    .optional()
    .describe(
      "While a crossover batch's clusters move from the baseline payload to the candidate (each upgrade takes 30–90 minutes): which, since when, and how many are done. Absent once the batch runs.",
    ),
  history: z
    .object({ runs: z.number().int().nonnegative(), from: z.string().optional(), to: z.string().optional() })
    .optional()
    .describe("The stream's history pool when the run was compared with it."),
  power: runPowerSchema
    .extend({ line: z.string().describe("What the design can see and what the target needs, in words.") })
    .optional()
    .describe(
      "What this arch's run design can see with 80% power per test class, and what the target (2% → 10% for gates) needs: the power planner's answer, computed once when the run was planned (absent without a cluster source, a baseline payload, or for upgrade runs).",
    ),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
});
export type GateArch = z.infer<typeof gateArchSchema>;

export const gateSchema = z.object({
  id: z.string(),
  state: z.enum(GATE_STATES),
  verdict: z
    .enum(GATE_VERDICTS)
    .optional()
    .describe(
      "Once every arch is completed: Rejected if any arch is, else Inconclusive if any arch is, else Accepted.",
    ),
  payload: z.string(),
  baselinePayload: z.string(),
  baselineSource: z.enum(["request", "release-controller"]),
  baselineRelease: z
    .string()
    .optional()
    .describe("The release name the release-controller gave for the stream."),
  stream: z.string(),
  iterations: z.number().int(),
  capabilities: z.array(z.string()).optional().describe("The build-farm capabilities the gate requires."),
  clusters: z.number().int().optional().describe("Clusters under test per arm, when asked for."),
  arches: z.array(gateArchSchema),
  createdAt: z.string(),
  url: z.url(),
});
export type Gate = z.infer<typeof gateSchema>;

export const problemSchema = z.object({
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type Problem = z.infer<typeof problemSchema>;
