import type { KubeObject } from "./object-store.ts";

/** A column of `kubectl get` (a Table's column definition and how to fill its cell). */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "date";
  cell(object: KubeObject): unknown;
}

/** One kind the simulated API server serves, as discovery lists it. */
export interface ResourceType {
  /** "" for the core group. */
  group: string;
  version: string;
  /** The plural name in paths, unique across groups here (the store's key). */
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Writes to the object leave `status` alone; `/status` writes change nothing else. */
  statusSubresource?: boolean;
  /** `kubectl get` columns after NAME; AGE is appended unless a column is named Age. Dates show as ages. */
  columns?: PrinterColumn[];
}

const condition = (o: KubeObject, type: string) =>
  (
    (o.status?.conditions ?? []) as { type: string; status: string; reason?: string; message?: string }[]
  ).find((c) => c.type === type);
const at = (o: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (v, key) => (v && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined),
    o,
  );

const nodeColumns: PrinterColumn[] = [
  {
    name: "Status",
    type: "string",
    cell: (o) => (condition(o, "Ready")?.status === "True" ? "Ready" : "NotReady"),
  },
  {
    name: "Roles",
    type: "string",
    cell: (o) =>
      Object.keys(o.metadata.labels ?? {})
        .filter((l) => l.startsWith("node-role.kubernetes.io/"))
        .map((l) => l.slice("node-role.kubernetes.io/".length))
        .join(",") || "<none>",
  },
  { name: "Age", type: "date", cell: (o) => o.metadata.creationTimestamp },
  { name: "Version", type: "string", cell: (o) => at(o, "status", "nodeInfo", "kubeletVersion") },
];

const clusterVersionColumns: PrinterColumn[] = [
  { name: "Version", type: "string", cell: (o) => at(o, "status", "desired", "version") },
  { name: "Available", type: "string", cell: (o) => condition(o, "Available")?.status },
  { name: "Progressing", type: "string", cell: (o) => condition(o, "Progressing")?.status },
  { name: "Status", type: "string", cell: (o) => condition(o, "Progressing")?.message },
];

/**
 * Everything the simulated clusters serve: what the build-farm executor uses (Jobs, Pods,
 * ConfigMaps, Secrets), what a cluster under test says about itself (Nodes, ClusterVersion,
 * Infrastructure, Network, component DaemonSets), what a lab's pods talk through (Services,
 * EndpointSlices, Leases), Hive on a hub (openshift/hive apis/hive/v1, with its printer columns) and
 * the RBAC kinds that decide what a token may do.
 */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  {
    group: "",
    version: "v1",
    resource: "namespaces",
    kind: "Namespace",
    namespaced: false,
    shortNames: ["ns"],
  },
  {
    group: "",
    version: "v1",
    resource: "nodes",
    kind: "Node",
    namespaced: false,
    shortNames: ["no"],
    statusSubresource: true,
    columns: nodeColumns,
  },
  { group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true, shortNames: ["po"] },
  {
    group: "",
    version: "v1",
    resource: "configmaps",
    kind: "ConfigMap",
    namespaced: true,
    shortNames: ["cm"],
  },
  { group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true },
  {
    group: "",
    version: "v1",
    resource: "services",
    kind: "Service",
    namespaced: true,
    shortNames: ["svc"],
    statusSubresource: true,
    columns: [
      { name: "Type", type: "string", cell: (o) => at(o, "spec", "type") },
      { name: "Cluster-IP", type: "string", cell: (o) => at(o, "spec", "clusterIP") },
      {
        name: "Port(s)",
        type: "string",
        cell: (o) =>
          ((at(o, "spec", "ports") ?? []) as { port: number; protocol?: string }[])
            .map((p) => `${p.port}/${p.protocol ?? "TCP"}`)
            .join(","),
      },
    ],
  },
  {
    group: "discovery.k8s.io",
    version: "v1",
    resource: "endpointslices",
    kind: "EndpointSlice",
    namespaced: true,
    columns: [
      { name: "AddressType", type: "string", cell: (o) => o.addressType },
      {
        name: "Endpoints",
        type: "string",
        cell: (o) =>
          ((o.endpoints ?? []) as { addresses: string[] }[]).flatMap((e) => e.addresses).join(",") ||
          "<unset>",
      },
    ],
  },
  {
    group: "coordination.k8s.io",
    version: "v1",
    resource: "leases",
    kind: "Lease",
    namespaced: true,
    columns: [{ name: "Holder", type: "string", cell: (o) => at(o, "spec", "holderIdentity") }],
  },
  { group: "batch", version: "v1", resource: "jobs", kind: "Job", namespaced: true },
  {
    group: "apps",
    version: "v1",
    resource: "daemonsets",
    kind: "DaemonSet",
    namespaced: true,
    shortNames: ["ds"],
  },
  {
    group: "config.openshift.io",
    version: "v1",
    resource: "clusterversions",
    kind: "ClusterVersion",
    namespaced: false,
    statusSubresource: true,
    columns: clusterVersionColumns,
  },
  {
    group: "config.openshift.io",
    version: "v1",
    resource: "infrastructures",
    kind: "Infrastructure",
    namespaced: false,
    statusSubresource: true,
  },
  {
    group: "config.openshift.io",
    version: "v1",
    resource: "networks",
    kind: "Network",
    namespaced: false,
    statusSubresource: true,
  },
  {
    group: "hive.openshift.io",
    version: "v1",
    resource: "clusterimagesets",
    kind: "ClusterImageSet",
    namespaced: false,
    shortNames: ["imgset"],
    statusSubresource: true,
    columns: [{ name: "Release", type: "string", cell: (o) => at(o, "spec", "releaseImage") }],
  },
  {
    group: "hive.openshift.io",
    version: "v1",
    resource: "clusterpools",
    kind: "ClusterPool",
    namespaced: true,
    shortNames: ["cp"],
    statusSubresource: true,
    columns: [
      { name: "Size", type: "string", cell: (o) => at(o, "spec", "size") },
      { name: "Standby", type: "string", cell: (o) => at(o, "status", "standby") },
      { name: "Ready", type: "string", cell: (o) => at(o, "status", "ready") },
      { name: "BaseDomain", type: "string", cell: (o) => at(o, "spec", "baseDomain") },
      { name: "ImageSet", type: "string", cell: (o) => at(o, "spec", "imageSetRef", "name") },
    ],
  },
  {
    group: "hive.openshift.io",
    version: "v1",
    resource: "clusterclaims",
    kind: "ClusterClaim",
    namespaced: true,
    statusSubresource: true,
    columns: [
      { name: "Pool", type: "string", cell: (o) => at(o, "spec", "clusterPoolName") },
      { name: "Pending", type: "string", cell: (o) => condition(o, "Pending")?.reason },
      { name: "ClusterNamespace", type: "string", cell: (o) => at(o, "spec", "namespace") },
      { name: "ClusterRunning", type: "string", cell: (o) => condition(o, "ClusterRunning")?.reason },
    ],
  },
  {
    group: "hive.openshift.io",
    version: "v1",
    resource: "clusterdeployments",
    kind: "ClusterDeployment",
    namespaced: true,
    shortNames: ["cd"],
    statusSubresource: true,
    columns: [
      { name: "InfraID", type: "string", cell: (o) => at(o, "spec", "clusterMetadata", "infraID") },
      {
        name: "Platform",
        type: "string",
        cell: (o) => o.metadata.labels?.["hive.openshift.io/cluster-platform"],
      },
      {
        name: "Region",
        type: "string",
        cell: (o) => o.metadata.labels?.["hive.openshift.io/cluster-region"],
      },
      {
        name: "Version",
        type: "string",
        cell: (o) => o.metadata.labels?.["hive.openshift.io/version-major-minor-patch"],
      },
      {
        name: "ClusterType",
        type: "string",
        cell: (o) => o.metadata.labels?.["hive.openshift.io/cluster-type"],
      },
      { name: "ProvisionStatus", type: "string", cell: (o) => condition(o, "Provisioned")?.reason },
      { name: "PowerState", type: "string", cell: (o) => at(o, "status", "powerState") },
    ],
  },
  ...(["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"] as const).map((kind) => ({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    resource: `${kind.toLowerCase()}s`,
    kind,
    namespaced: !kind.startsWith("Cluster"),
  })),
];

/** The type a request path names, if this server serves it. */
export function findResourceType(group: string, version: string, resource: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => t.group === group && t.version === version && t.resource === resource);
}
