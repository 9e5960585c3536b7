import { z } from "zod";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { capabilitySchema } from "../config/capability.ts";
import { clusterSourcesSchema } from "../clusters/cluster-sources-config.ts";
import { dnsLabelSchema, dnsSubdomainSchema } from "@netstress/core/kube/kubernetes-names.ts";
import { parseGoDuration } from "@netstress/core/model/parse-go-duration.ts";

/** What Kubernetes accepts as an environment variable name. */
export const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
/** The variables the executor sets itself; configuration may not shadow them. */
export const RESERVED_ENV = /^(EXTENSIONS_PAYLOAD_OVERRIDE_|KUBECONFIG$|NETSTRESS_)/;

const quantity = z
  .union([z.string(), z.number().nonnegative()])
  .transform(String)
  .pipe(
    z
      .string()
      .regex(
        /^(\d+(\.\d+)?|\.\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE]\d+)?$/,
        "a Kubernetes quantity such as 500m, 2, 1Gi",
      ),
  );
const resourceList = z.strictObject({ cpu: quantity, memory: quantity });
const labelKey = z
  .string()
  .max(317)
  .regex(/^([a-z0-9.-]+\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/, "a label key");
const labelValue = z
  .string()
  .max(63)
  .regex(/^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/, "a label value");

const tolerationSchema = z.strictObject({
  key: labelKey.optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: labelValue.optional(),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
  tolerationSeconds: z.int().nonnegative().optional(),
});

const extraEnvSchema = z
  .strictObject({
    name: z.string().regex(ENV_NAME, "an environment variable name"),
    value: z.string().optional(),
    /** Secrets are referenced, never copied into the configuration or the Job. */
    secretKeyRef: z.strictObject({ name: dnsSubdomainSchema, key: z.string().min(1) }).optional(),
  })
  .refine((e) => (e.value === undefined) !== (e.secretKeyRef === undefined), "give value or secretKeyRef")
  .refine((e) => !RESERVED_ENV.test(e.name), "the executor sets this variable itself");

const podTemplateSchema = z.strictObject({
  nodeSelector: z.record(labelKey, labelValue).default({}).describe("Added to kubernetes.io/arch."),
  tolerations: z.array(tolerationSchema).default([]),
});

export const clusterSchema = z
  .strictObject({
    name: dnsLabelSchema.describe("Unique; shown in check runs and Job labels."),
    kubeconfig: z
      .string()
      .min(1)
      .describe('Path of a kubeconfig file, or "in-cluster" for the service account the bot runs as.'),
    context: z.string().min(1).optional().describe("Context of the kubeconfig (default: its current one)."),
    namespace: dnsLabelSchema.describe("Where runner Jobs are created."),
    arches: z.array(archSchema).min(1).describe("Node architectures the cluster offers."),
    capacity: z.int().min(1).max(10_000).describe("Shards (pods) running at once, across all bot replicas."),
    capabilities: z
      .array(capabilitySchema)
      .default([])
      .describe("What else a shard may require (e.g. ipv6, baremetal)."),
    blocked: z
      .union([z.boolean(), z.string().min(1)])
      .default(false)
      .describe("true or a reason: no new shards go there; running ones finish."),
    pod: podTemplateSchema.optional().describe("Cluster-specific node selectors and tolerations."),
  })
  .describe("One build-farm cluster.");
export type ClusterConfig = z.infer<typeof clusterSchema>;

export const farmConfigSchema = z
  .strictObject({
    clusters: z
      .array(clusterSchema)
      .min(1)
      .refine(
        (list) => new Set(list.map((c) => c.name)).size === list.length,
        "cluster names must be unique",
      ),
    runner: z.strictObject({
      image: z
        .string()
        .regex(
          /^[^\s@]+@sha256:[a-f0-9]{64}$/,
          "the runner image by digest (registry/name@sha256:<64 hex digits>, as `skopeo inspect --format '{{.Digest}}' docker://IMAGE` prints it): a tag can move, and the tests' probe pods run this image too",
        )
        .describe(
          "The runner image (netstress on Node 20), by digest; the network extension's probe pods run it too (NETSTRESS_PROBE_IMAGE).",
        ),
      command: z
        .array(z.string().min(1))
        .min(1)
        .default(["netstress"])
        .describe("Entrypoint of the runner image."),
      imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).default("IfNotPresent"),
      imagePullSecrets: z.array(dnsSubdomainSchema).default([]),
      serviceAccountName: dnsSubdomainSchema.optional(),
      resources: z
        .strictObject({ requests: resourceList, limits: resourceList })
        .default({ requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "2", memory: "2Gi" } }),
      pod: podTemplateSchema.default({ nodeSelector: {}, tolerations: [] }),
      clusterUnderTest: z
        .strictObject({
          secretName: dnsSubdomainSchema,
          key: z.string().min(1).default("kubeconfig"),
        })
        .optional()
        .describe(
          "Secret holding the kubeconfig of the cluster under test; mounted, KUBECONFIG points at it.",
        ),
      env: z.array(extraEnvSchema).default([]).describe("Extra environment of the runner container."),
    }),
    jobs: z
      .strictObject({
        activeDeadlineSeconds: z
          .int()
          .min(60)
          .default(4 * 3600),
        ttlSecondsAfterFinished: z
          .int()
          .min(60)
          .default(24 * 3600),
        infraRetries: z
          .int()
          .min(0)
          .max(5)
          .default(2)
          .describe("Reruns of an iteration lost to the infrastructure (eviction, OOM, lost node)."),
        pendingSeconds: z
          .int()
          .min(1)
          .default(600)
          .describe(
            "A pod still Pending this long (no node takes it, or its node does not start it: sandbox, network, volumes) is given up; the iteration reruns on another cluster if one can take it (an infrastructure retry).",
          ),
        timeoutGraceSeconds: z
          .int()
          .min(1)
          .max(3600)
          .default(60)
          .describe(
            "After a test is interrupted (SIGINT at its timeout, SIGTERM on cancel), how long its cleanups may take before SIGABRT: the runner's --timeout-grace (origin waits a minute).",
          ),
      })
      .default({
        activeDeadlineSeconds: 4 * 3600,
        ttlSecondsAfterFinished: 24 * 3600,
        infraRetries: 2,
        pendingSeconds: 600,
        timeoutGraceSeconds: 60,
      }),
    placement: z
      .strictObject({
        leaseSeconds: z
          .int()
          .min(10)
          .default(120)
          .describe("A capacity lease not renewed this long is freed."),
        drainAfterFailures: z
          .int()
          .min(1)
          .default(5)
          .describe("Consecutive API failures that drain a cluster."),
        drainSeconds: z.int().min(1).default(300).describe("How long a drained cluster gets no new shards."),
      })
      .default({ leaseSeconds: 120, drainAfterFailures: 5, drainSeconds: 300 }),
    clusterSources: clusterSourcesSchema,
    testBinaries: z
      .string()
      .min(1)
      .optional()
      .describe("tag → test binary path registry (default: openshift/origin's table)."),
  })
  .superRefine((config, context) => {
    const deadlineMs = config.jobs.activeDeadlineSeconds * 1000;
    for (const [index, source] of config.clusterSources.entries()) {
      if (source.type !== "hive" || (parseGoDuration(source.claimLifetime) ?? Infinity) > deadlineMs)
        continue;
      context.addIssue({
        code: "custom",
        path: ["clusterSources", index, "claimLifetime"],
        message: `${source.claimLifetime} is not longer than a Job may run (jobs.activeDeadlineSeconds: ${config.jobs.activeDeadlineSeconds} s): no iteration starts on a cluster whose claim ends within a Job's deadline, so its claims would serve none. Raise claimLifetime (and the pools' claimLifetime.maximum) above the deadline, or lower the deadline`,
      });
    }
  })
  .describe("The build farms where the bot runs shards (NETSTRESS_FARM_CONFIG).");
export type FarmConfig = z.infer<typeof farmConfigSchema>;
