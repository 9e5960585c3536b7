import { z } from "zod";
import { oteResultValueSchema, type Lifecycle } from "@netstress/core/model/ote-result-fields.ts";

/**
 * Wire formats of the openshift-tests-extension protocol, as the reference implementation emits
 * them. Unknown fields are kept (passthrough) because newer binaries add fields freely.
 */

/**
 * A lifecycle as binaries print it. Only "informing" spares the run; anything else is blocking, as
 * origin decides: the framework emits `""` for every spec not built from Ginkgo (its Cypress
 * builder, hand-built specs), and a lifecycle a newer framework invents is no reason to drop a test.
 */
const wireLifecycleSchema = z
  .string()
  .nullish()
  .transform((l): Lifecycle => (l === "informing" ? "informing" : "blocking"));

/** `<bin> info` */
export const oteInfoSchema = z.looseObject({
  apiVersion: z.string(),
  source: z.looseObject({
    commit: z.string().optional().default(""),
    build_date: z.string().optional().default(""),
    git_tree_state: z.string().optional().default(""),
  }),
  component: z.looseObject({
    product: z.string(),
    type: z.string(),
    name: z.string(),
  }),
  suites: z
    .array(
      z.looseObject({
        name: z.string(),
        parents: z.array(z.string()).nullish(),
        qualifiers: z.array(z.string()).nullish(),
        /** Default number of times to run each test of the suite. */
        count: z.number().int().nonnegative().nullish(),
        /** The most tests of the suite that run at once. */
        parallelism: z.number().int().nonnegative().nullish(),
        /** "Stable" or "Disruptive": whether the suite is expected to disrupt the cluster. */
        clusterStability: z.string().nullish(),
        /** Default per-test timeout, a Go time.Duration: nanoseconds. */
        testTimeout: z.number().int().nonnegative().nullish(),
      }),
    )
    .nullish()
    .transform((s) => s ?? []),
});
export type OteInfo = z.infer<typeof oteInfoSchema>;

/**
 * One entry of `<bin> images` (a JSON array): a test image as Kubernetes' e2e image configs name
 * it, `<registry>/<name>:<version>`; `mapped` is where a mirror tool is to put it, when the
 * extension decides that itself.
 */
const oteImageFields = {
  index: z.number().int(),
  registry: z.string().min(1),
  name: z.string().min(1),
  version: z.string().min(1),
};
export const oteImageSchema = z.looseObject({
  ...oteImageFields,
  mapped: z.looseObject(oteImageFields).nullish(),
});
export type OteImage = z.infer<typeof oteImageSchema>;

const stringList = z
  .array(z.string())
  .nullish()
  .transform((l) => l ?? []);

/**
 * `resources.isolation` of a spec: tests sharing a `conflict` name never run at the same time
 * ("*" conflicts with everything); a test applying a `taint` runs only beside tests that
 * tolerate it (`toleration`).
 */
export const oteIsolationSchema = z.looseObject({
  mode: z.string().optional(),
  conflict: stringList,
  taint: stringList,
  toleration: stringList,
});
export type OteIsolation = z.infer<typeof oteIsolationSchema>;

/** CEL expressions over the cluster environment; an empty one selects every environment. */
export const oteEnvironmentSelectorSchema = z.looseObject({
  include: z.string().optional(),
  exclude: z.string().optional(),
});
export type OteEnvironmentSelector = z.infer<typeof oteEnvironmentSelectorSchema>;

/** One line of `<bin> list -o jsonl`. `labels` is a set encoded as an object of empty objects. */
export const oteSpecSchema = z.looseObject({
  name: z.string().min(1),
  originalName: z.string().optional(),
  labels: z
    .record(z.string(), z.unknown())
    .nullish()
    .transform((l) => Object.keys(l ?? {})),
  tags: z
    .record(z.string(), z.string())
    .nullish()
    .transform((t) => t ?? {}),
  codeLocations: stringList,
  resources: z
    .looseObject({
      isolation: oteIsolationSchema.nullish(),
      /** How long the test may take, a Go duration ("30m"): a hint for its default timeout. */
      timeout: z.string().nullish(),
      /** How long the test usually takes, a Go duration ("5m"): a hint for ordering the tests. */
      duration: z.string().nullish(),
    })
    .nullish()
    .transform((r) => ({ ...r, isolation: r?.isolation ?? { conflict: [], taint: [], toleration: [] } })),
  source: z.string().optional().default(""),
  lifecycle: wireLifecycleSchema,
  environmentSelector: oteEnvironmentSelectorSchema.nullish().transform((e) => e ?? {}),
});
export type OteSpec = z.infer<typeof oteSpecSchema>;

/** `YYYY-MM-DD HH:MM:SS.ffffff UTC`, the reference implementation's time stamp format. */
export const oteTimestampPattern = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})? UTC$/;

/** One line of `<bin> run-test -o jsonl`. */
export const oteResultSchema = z.looseObject({
  name: z.string().min(1),
  lifecycle: wireLifecycleSchema,
  duration: z.number().nonnegative(),
  startTime: z.string().regex(oteTimestampPattern).optional(),
  endTime: z.string().regex(oteTimestampPattern).optional(),
  result: oteResultValueSchema,
  output: z.string().optional().default(""),
  error: z.string().optional(),
  details: z.unknown().optional(),
});
export type OteResult = z.infer<typeof oteResultSchema>;
