import { z } from "zod";
import { archSchema } from "../arch/arch.ts";
import { oteEnvironmentSchema } from "./ote-environment.ts";
import { armSchema, binarySourceSchema, clusterLabelSchema, payloadPullspecSchema } from "./result-record.ts";

/**
 * One component's test binary in one arm: a file on this machine (`binary`), or the image it is in
 * (`image` pinned by `digest` for the plan's arch, at `imagePath` or as `referrer`), which whoever
 * runs it gets: a build-farm pod copies it out of the image, the local executor fetches it.
 */
export const planComponentSchema = z.object({
  /** Payload tag (e.g. ovn-kubernetes). */
  component: z.string().min(1),
  /** Path to the binary (may be *.gz; it is unpacked before use); absent until it is fetched. */
  binary: z.string().min(1).optional(),
  source: binarySourceSchema.optional(),
  image: z.string().optional(),
  digest: z.string().optional(),
  commit: z.string().optional(),
  /**
   * Where the component image keeps the binary (what a build-farm pod copies out of it); with a
   * referrer, its file name is the referrer layer's title.
   */
  imagePath: z.string().optional(),
  /** The tests-extension referrer artifact the binary comes from instead of the image itself. */
  referrer: z.string().optional(),
  /** The OCI layout that holds `image` (a payload read from a layout carries its component images). */
  layout: z.string().optional(),
  /** Tests to run; omitted means every test the binary lists. */
  tests: z.array(z.string()).optional(),
});
export type PlanComponent = z.infer<typeof planComponentSchema>;

/**
 * Which of the listed tests run, beyond the plan's own `tests`: the binaries' suite (from `info`),
 * whether [Disruptive] tests may run (never by default), and the cluster environment given to
 * `list` and to `environmentSelector` (read from the cluster under test when there is one; these
 * values take precedence).
 */
export const testSelectionSchema = z.object({
  suite: z.string().min(1).max(200).optional(),
  includeDisruptive: z.boolean().optional(),
  environment: oteEnvironmentSchema.optional(),
});
export type TestSelection = z.infer<typeof testSelectionSchema>;

/**
 * A cluster under test of one arm, as a plan file names it (a build-farm pod's plan, a
 * `netstress run --plan` file): its id and payload go on each record, and the tests get
 * KUBECONFIG=<kubeconfig>, the path of its kubeconfig file (a relative one is resolved against
 * `netstress run --kubeconfig-dir`, where a build-farm pod mounts its Secret).
 */
export const planClusterSchema = z.object({
  arm: armSchema,
  id: clusterLabelSchema,
  payload: payloadPullspecSchema,
  kubeconfig: z.string().min(1),
});
export type PlanCluster = z.infer<typeof planClusterSchema>;

/**
 * What the runner executes: per arm, the component binaries. Both arms run interleaved on the same
 * host so that whatever disturbs the cluster disturbs both alike.
 */
export const executionPlanSchema = z.object({
  arch: archSchema,
  selection: testSelectionSchema.optional(),
  arms: z
    .array(
      z.object({
        arm: armSchema,
        components: z.array(planComponentSchema).min(1),
        /**
         * The release pullspec this arm's `[Upgrade]` tests upgrade its clusters to (given to them as
         * NETSTRESS_UPGRADE_TARGET); without it they have nothing to upgrade to and skip.
         */
        upgradeTarget: payloadPullspecSchema.optional(),
      }),
    )
    .min(1)
    .refine((arms) => new Set(arms.map((a) => a.arm)).size === arms.length, "each arm may appear once"),
  /** The clusters under test; an arm's iterations spread over its own round-robin by iteration. */
  clusters: z.array(planClusterSchema).optional(),
});
export type ExecutionPlan = z.infer<typeof executionPlanSchema>;
