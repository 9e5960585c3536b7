import { z } from "zod";
import { archSchema } from "../arch/arch.ts";
import { capabilitySchema } from "../config/capability.ts";
import { parseGoDuration } from "../model/parse-go-duration.ts";

/** RFC 1123 label: names Kubernetes uses in DNS and labels (namespaces, clusters here). */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** RFC 1123 subdomain: names of Secrets, ServiceAccounts and the like. */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** What Kubernetes accepts as an environment variable name. */
export const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
/** The variables the executor sets itself; configuration may not shadow them. */
export const RESERVED_ENV = /^(EXTENSIONS_PAYLOAD_OVERRIDE_|KUBECONFIG$|NETSTRESS_)/;

const dnsLabel = z.string().max(63).regex(DNS_LABEL, "lowercase letters, digits and '-' (RFC 1123 label)");
const dnsSubdomain = z
  .string()
  .max(253)
  .regex(DNS_SUBDOMAIN, "lowercase letters, digits, '-' and '.' (RFC 1123 subdomain)");
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
    secretKeyRef: z.strictObject({ name: dnsSubdomain, key: z.string().min(1) }).optional(),
  })
  .refine((e) => (e.value === undefined) !== (e.secretKeyRef === undefined), "give value or secretKeyRef")
  .refine((e) => !RESERVED_ENV.test(e.name), "the executor sets this variable itself");

const podTemplateSchema = z.strictObject({
  nodeSelector: z.record(labelKey, labelValue).default({}).describe("Added to kubernetes.io/arch."),
  tolerations: z.array(tolerationSchema).default([]),
});

export const clusterSchema = z
  .strictObject({
    name: dnsLabel.describe("Unique; shown in check runs and Job labels."),
    kubeconfig: z
      .string()
      .min(1)
      .describe('Path of a kubeconfig file, or "in-cluster" for the service account the bot runs as.'),
    context: z.string().min(1).optional().describe("Context of the kubeconfig (default: its current one)."),
    namespace: dnsLabel.describe("Where runner Jobs are created."),
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

/** A Go duration as Hive parses it (time.ParseDuration): 90m, 6h, 1h30m. */
const goDuration = z
  .string()
  .regex(/^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/, "a duration such as 90m, 6h or 1h30m");
const uniqueNames = (list: readonly { name: string }[]) =>
  new Set(list.map((c) => c.name)).size === list.length;

const staticClusterSchema = z
  .strictObject({
    name: dnsLabel.describe("Unique within the source; the cluster's id is <source>/<name>."),
    arch: archSchema.describe("The CPU architecture of its nodes."),
    kubeconfig: z.string().min(1).optional().describe("Path of its admin kubeconfig file."),
    kubeconfigSecret: z
      .strictObject({
        namespace: dnsLabel,
        name: dnsSubdomain,
        key: z.string().min(1).default("kubeconfig"),
      })
      .optional()
      .describe("A Secret holding its admin kubeconfig, read through the source's secretsFrom."),
    shared: z
      .int()
      .min(1)
      .max(100)
      .default(1)
      .describe(
        "Arms (of any runs) that may use it at once; all of them need the payload it runs. Each holds its cluster-admin kubeconfig: what one run's tests do, the others see. Not above 1 on a source with reinstall: true.",
      ),
    upgrade: z
      .boolean()
      .default(false)
      .describe("May be moved to an arm's payload (spec.desiredUpdate, force) when nobody else uses it."),
  })
  .refine(
    (c) => (c.kubeconfig === undefined) !== (c.kubeconfigSecret === undefined),
    "give kubeconfig or kubeconfigSecret",
  );

const staticSourceSchema = z
  .strictObject({
    type: z.literal("static"),
    name: dnsLabel.describe("Unique among the sources; shown in cluster ids and check runs."),
    secretsFrom: z
      .string()
      .min(1)
      .default("in-cluster")
      .describe('Kubeconfig (path or "in-cluster") of the cluster holding the kubeconfigSecrets.'),
    upgradeSeconds: z
      .int()
      .min(1)
      .default(5400)
      .describe("An upgrade not completed this long makes the cluster unavailable for the request."),
    reinstall: z
      .boolean()
      .default(false)
      .describe(
        "Serve PR arms too (their payload and test binaries run with cluster-admin): a cluster a PR arm had is handed out again only once its kubeconfig changed (it was reinstalled). Without it the source serves released payloads only: gate, baseline and periodic arms.",
      ),
    clusters: z.array(staticClusterSchema).min(1).refine(uniqueNames, "cluster names must be unique"),
  })
  .superRefine((source, context) => {
    if (!source.reinstall) return;
    for (const [index, cluster] of source.clusters.entries()) {
      if (cluster.shared <= 1) continue;
      context.addIssue({
        code: "custom",
        path: ["clusters", index, "shared"],
        message: `${cluster.name} is shared by ${cluster.shared} runs at once, and this source serves PR arms (reinstall: true): a PR's code would have cluster-admin on a cluster other runs are using. Set shared: 1 here, or serve shared clusters from a source without reinstall`,
      });
    }
  })
  .describe("Pre-installed clusters; the payload each runs is read from its ClusterVersion.");

/**
 * What a ClusterDeployment on each platform needs beyond a region and credentials (openshift/hive
 * apis/hive/v1 platform types and Hive's webhook), on the platforms the Hive source cannot make
 * deployments on; pools there serve claims all the same.
 */
const PLATFORM_NEEDS: Partial<Record<string, string>> = {
  ibmcloud: "the ccoctl manifests (spec.provisioning.manifestsSecretRef)",
  nutanix: "platform.nutanix.prismCentral and no region",
  openstack: "platform.openstack.cloud (a clouds.yaml entry) and no region",
  vsphere: "platform.vsphere.certificatesSecretRef, vCenter and datacenter, and no region",
};
const DEPLOYABLE = ["aws", "azure", "gcp"];

const hiveSourceSchema = z
  .strictObject({
    type: z.literal("hive"),
    name: dnsLabel.describe("Unique among the sources; shown in cluster ids and check runs."),
    hub: z
      .strictObject({
        kubeconfig: z.string().min(1).describe('Path of the hub\'s kubeconfig, or "in-cluster".'),
        context: z.string().min(1).optional(),
      })
      .describe("The cluster running Hive."),
    namespace: dnsLabel.describe(
      "Where the ClusterPools are and where claims, deployments and their Secrets are made.",
    ),
    platform: z
      .enum(["aws", "azure", "gcp", "ibmcloud", "nutanix", "openstack", "vsphere"])
      .describe("Pools on other platforms are not used; deployments are made on this one."),
    maxClusters: z
      .int()
      .min(1)
      .max(10_000)
      .describe("Clusters of this source held at once by every bot replica; more requests queue."),
    claimSubjects: z
      .array(
        z
          .strictObject({
            kind: z.enum(["ServiceAccount", "Group", "User"]),
            name: z.string().min(1),
            namespace: dnsLabel.optional(),
          })
          .refine(
            (s) => (s.kind === "ServiceAccount") === (s.namespace !== undefined),
            "a ServiceAccount subject names its namespace; a Group or User none",
          ),
      )
      .min(1)
      .optional()
      .describe(
        "A claim's spec.subjects: who Hive lets read the claimed cluster's kubeconfig — the identity of the hub kubeconfig, or a group it is in. Default: the ServiceAccount netstress-bot in `namespace`, as deploy/hub makes it.",
      ),
    claimLifetime: goDuration
      .default("8h")
      .describe("A claim's spec.lifetime: Hive deletes it then even if the bot is gone."),
    deleteAfter: goDuration
      .default("8h")
      .describe("A deployment's hive.openshift.io/delete-after: Hive's backstop against leaks."),
    readySeconds: z
      .int()
      .min(1)
      .default(5400)
      .describe("A claim or deployment not ready this long is given up (another attempt follows)."),
    attempts: z
      .int()
      .min(1)
      .max(5)
      .default(2)
      .describe("Installs or claims tried per cluster wanted before the request fails."),
    deployment: z
      .strictObject({
        baseDomain: z.string().min(1),
        region: z.string().min(1),
        credentialsSecret: dnsSubdomain.describe("platform.<platform>.credentialsSecretRef."),
        pullSecret: dnsSubdomain.describe("spec.pullSecretRef."),
        installConfigSecret: dnsSubdomain.describe(
          "A Secret whose install-config.yaml is the template: name, base domain, region and the control-plane and compute architecture are set per deployment.",
        ),
        arches: z.array(archSchema).min(1).describe("Architectures this source may install."),
      })
      .optional()
      .describe("How to install a payload no pool serves (a PR payload); without it, only pools are used."),
  })
  .superRefine((source, context) => {
    const needs = PLATFORM_NEEDS[source.platform];
    if (source.deployment && needs) {
      context.addIssue({
        code: "custom",
        path: ["deployment"],
        message: `the Hive source makes deployments on ${DEPLOYABLE.join(", ")} only: on ${source.platform} Hive needs ${needs}, which it does not write. Remove deployment (claims from ${source.platform} pools still work) or use another platform`,
      });
    }
  })
  .describe("OpenShift Hive on a hub: ClusterClaims from pools of a payload, else ClusterDeployments.");

export const clusterSourceSchema = z.discriminatedUnion("type", [staticSourceSchema, hiveSourceSchema]);
export type ClusterSourceConfig = z.infer<typeof clusterSourceSchema>;
export type StaticSourceConfig = z.infer<typeof staticSourceSchema>;
export type HiveSourceConfig = z.infer<typeof hiveSourceSchema>;

export const clusterSourcesSchema = z
  .array(clusterSourceSchema)
  .default([])
  .refine(uniqueNames, "cluster source names must be unique")
  .describe(
    "Where clusters under test come from: a static cluster already running an arm's payload first, then Hive.",
  );

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
      imagePullSecrets: z.array(dnsSubdomain).default([]),
      serviceAccountName: dnsSubdomain.optional(),
      resources: z
        .strictObject({ requests: resourceList, limits: resourceList })
        .default({ requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "2", memory: "2Gi" } }),
      pod: podTemplateSchema.default({ nodeSelector: {}, tolerations: [] }),
      clusterUnderTest: z
        .strictObject({
          secretName: dnsSubdomain,
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
