import { z } from "zod";
import { archSchema } from "../arch/arch.ts";
import { disruptionSchema } from "./disruption-schema.ts";
import { harnessErrorSchema, lifecycleSchema, oteResultValueSchema } from "./ote-result-fields.ts";

export const armSchema = z.enum(["pr", "baseline"]);
export type Arm = z.infer<typeof armSchema>;

/**
 * A cluster under test's label: what names it in reports, never a path or a command. A cluster
 * source's clusters are `<source>/<name>`.
 */
export const CLUSTER_LABEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,252}$/;
export const clusterLabelSchema = z
  .string()
  .regex(
    CLUSTER_LABEL_PATTERN,
    "a cluster label is 1–253 letters, digits, '.', '_', ':', '/' or '-', starting with a letter or digit",
  );
/** The payload a cluster under test ran: a release image pullspec by digest. */
export const payloadPullspecSchema = z.string().min(1).max(1000);
/** Why a test runs alone on the cluster: [Serial] or [Disruptive] in its name or labels, or isolation conflict "*". */
export const aloneReasonSchema = z.enum(["serial", "disruptive", "isolation"]);
export type AloneReason = z.infer<typeof aloneReasonSchema>;

export const binarySourceSchema = z.enum(["override", "released"]);
export type BinarySource = z.infer<typeof binarySourceSchema>;

/**
 * One line of `results.jsonl`: one execution (attempt) of one test in one iteration of one arm.
 * This is the contract between the runner and every later stage; see docs/results-format.md.
 * It is the OTE result record plus where and how the execution happened.
 */
export const resultRecordSchema = z.looseObject({
  // OTE result fields, as the binary reported them (or as the harness decided, see harnessError).
  name: z.string().min(1),
  lifecycle: lifecycleSchema,
  duration: z.number().nonnegative(),
  startTime: z.string().optional(),
  endTime: z.string().optional(),
  result: oteResultValueSchema,
  output: z.string().default(""),
  error: z.string().optional(),
  details: z.unknown().optional(),
  // What the binary's `list` said about the spec (left out when it said nothing).
  /** The first name the test was known by (the spec's `originalName`); renamed tests join on it. */
  originalName: z.string().min(1).optional(),
  labels: z.array(z.string()).optional(),
  tags: z.record(z.string(), z.string()).optional(),
  /** The spec's `source` (e.g. `openshift:payload:ovn-kubernetes`); `source` below is the binary's. */
  specSource: z.string().optional(),
  codeLocations: z.array(z.string()).optional(),
  // Where it ran.
  arm: armSchema,
  arch: archSchema,
  /** 0-based iteration number within the run. */
  iteration: z.number().int().nonnegative(),
  /** 0-based attempt within the iteration; attempt > 0 is a retry of a failure. */
  attempt: z.number().int().nonnegative().default(0),
  /** Payload tag of the component whose binary holds the test (e.g. ovn-kubernetes). */
  component: z.string().min(1),
  /** Whether the binary came from the PR's image or the released payload, when known. */
  source: binarySourceSchema.optional(),
  /** The cluster under test the iteration ran against; iterations on one cluster share its weather. */
  cluster: clusterLabelSchema.optional(),
  /** The payload that cluster ran (a pullspec by digest, read from its ClusterVersion). */
  payload: payloadPullspecSchema.optional(),
  /** Set when the harness, not the binary, decided the result (timeout, crash, no result …). */
  harnessError: harnessErrorSchema.optional(),
  /** Set when no other test of either arm ran beside this one, and why. */
  ranAlone: aloneReasonSchema.optional(),
  /** The result's `netstress.disruption` detail, validated (see read-disruption.ts). */
  disruption: z.array(disruptionSchema).optional(),
  /** What the harness noticed about the result without changing it (e.g. a malformed detail it dropped). */
  harnessNotes: z.array(z.string().max(2_000)).max(20).optional(),
});
export type ResultRecord = z.infer<typeof resultRecordSchema>;

/** The spec's own fields a record carries. */
export type SpecFacts = Pick<
  ResultRecord,
  "originalName" | "labels" | "tags" | "specSource" | "codeLocations"
>;
