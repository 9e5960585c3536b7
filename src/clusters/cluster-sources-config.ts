import { z } from "zod";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { dnsLabelSchema, dnsSubdomainSchema } from "@netstress/core/kube/kubernetes-names.ts";

// The farm configuration's clusterSources: where clusters under test come from. The farm file
// carries them (farm/farm-config.ts), clusters/ reads them.

/** A Go duration as Hive parses it (time.ParseDuration): 90m, 6h, 1h30m. */
const goDuration = z
  .string()
  .regex(/^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/, "a duration such as 90m, 6h or 1h30m");
const uniqueNames = (list: readonly { name: string }[]) =>
  new Set(list.map((c) => c.name)).size === list.length;

const staticClusterSchema = z
  .strictObject({
    name: dnsLabelSchema.describe("Unique within the source; the cluster's id is <source>/<name>."),
    arch: archSchema.describe("The CPU architecture of its nodes."),
    kubeconfig: z.string().min(1).optional().describe("Path of its admin kubeconfig file."),
    kubeconfigSecret: z
      .strictObject({
        namespace: dnsLabelSchema,
        name: dnsSubdomainSchema,
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
    name: dnsLabelSchema.describe("Unique among the sources; shown in cluster ids and check runs."),
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
    name: dnsLabelSchema.describe("Unique among the sources; shown in cluster ids and check runs."),
    hub: z
      .strictObject({
        kubeconfig: z.string().min(1).describe('Path of the hub\'s kubeconfig, or "in-cluster".'),
        context: z.string().min(1).optional(),
      })
      .describe("The cluster running Hive."),
    namespace: dnsLabelSchema.describe(
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
            namespace: dnsLabelSchema.optional(),
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
    upgradeSeconds: z
      .int()
      .min(1)
      .default(5400)
      .describe(
        "A crossover by upgrade moves its claimed clusters to the PR payload: an upgrade not completed this long gives the cluster up.",
      ),
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
        credentialsSecret: dnsSubdomainSchema.describe("platform.<platform>.credentialsSecretRef."),
        pullSecret: dnsSubdomainSchema.describe("spec.pullSecretRef."),
        installConfigSecret: dnsSubdomainSchema.describe(
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
