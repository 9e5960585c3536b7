import { randomUUID } from "node:crypto";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { KubeObject } from "./object-store.ts";
import type { ComponentBuild } from "./simulated-release.ts";

/** Where a payload tag's image runs in a cluster, for the tags whose workload tests look at. */
const COMPONENT_WORKLOADS: Record<
  string,
  { namespace: string; name: string; containers: string[]; networkType?: string }
> = {
  "ovn-kubernetes": {
    namespace: "openshift-ovn-kubernetes",
    name: "ovnkube-node",
    containers: ["ovn-controller", "ovnkube-controller"],
    networkType: "OVNKubernetes",
  },
  sdn: { namespace: "openshift-sdn", name: "sdn", containers: ["sdn"], networkType: "OpenShiftSDN" },
  multus: { namespace: "openshift-multus", name: "multus", containers: ["kube-multus"] },
};

/** The annotations a component workload carries about its build (the image's labels). */
const BUILD_COMMIT_ANNOTATION = "io.openshift.build.commit.id";
const BUILD_SOURCE_ANNOTATION = "io.openshift.build.source-location";

/**
 * The DaemonSets of the components a cluster runs, as a test reads them (`kubectl get ds
 * ovnkube-node -n openshift-ovn-kubernetes -o jsonpath='{..image}'`): one per known tag — the
 * network plugin's only when it is the cluster's network type — every container on the tag's
 * image, annotated with the build's commit and source.
 */
export function componentWorkloads(options: {
  components: Record<string, ComponentBuild>;
  networkType: string;
}): KubeObject[] {
  return Object.entries(options.components).flatMap(([tag, build]) => {
    const workload = COMPONENT_WORKLOADS[tag];
    if (!workload || (workload.networkType && workload.networkType !== options.networkType)) return [];
    return [
      {
        metadata: {
          name: workload.name,
          namespace: workload.namespace,
          labels: { app: workload.name, component: "network" },
          annotations: {
            "release.openshift.io/payload-tag": tag,
            ...(build.commit ? { [BUILD_COMMIT_ANNOTATION]: build.commit } : {}),
            ...(build.sourceLocation ? { [BUILD_SOURCE_ANNOTATION]: build.sourceLocation } : {}),
          },
        },
        spec: {
          selector: { matchLabels: { app: workload.name } },
          template: {
            metadata: { labels: { app: workload.name } },
            spec: { containers: workload.containers.map((name) => ({ name, image: build.image })) },
          },
        },
        status: { desiredNumberScheduled: 3, numberReady: 3, updatedNumberScheduled: 3 },
      },
    ];
  });
}

/**
 * What an installed OpenShift cluster says about itself: ClusterVersion `version` (the payload it
 * runs, by image, with a Completed history entry and Available/Progressing/Failing conditions),
 * Infrastructure and Network `cluster`.
 */
export function clusterUnderTestObjects(options: {
  name: string;
  url: string;
  arch: Arch;
  payload: string;
  version: string;
  platform: string;
  region: string;
  networkType: string;
}): { resource: string; object: KubeObject }[] {
  const now = new Date().toISOString();
  const cluster = (name: string) => ({ name, namespace: "" });
  const platform = options.platform;
  return [
    {
      resource: "clusterversions",
      object: {
        metadata: cluster("version"),
        spec: { clusterID: randomUUID() },
        status: {
          desired: { version: options.version, image: options.payload },
          history: [
            {
              state: "Completed",
              startedTime: now,
              completionTime: now,
              version: options.version,
              image: options.payload,
              verified: false,
            },
          ],
          observedGeneration: 1,
          versionHash: randomUUID().slice(0, 12),
          capabilities: {
            enabledCapabilities: ["baremetal", "Console", "Insights", "marketplace", "openshift-samples"],
          },
          availableUpdates: null,
          conditions: [
            {
              type: "Available",
              status: "True",
              lastTransitionTime: now,
              message: `Done applying ${options.version}`,
            },
            { type: "Failing", status: "False", lastTransitionTime: now },
            {
              type: "Progressing",
              status: "False",
              lastTransitionTime: now,
              message: `Cluster version is ${options.version}`,
            },
            {
              type: "ReleaseAccepted",
              status: "True",
              lastTransitionTime: now,
              reason: "PayloadLoaded",
              message: `Payload loaded version="${options.version}" image="${options.payload}" architecture="${options.arch}"`,
            },
          ],
        },
      },
    },
    {
      resource: "infrastructures",
      object: {
        metadata: cluster("cluster"),
        spec: { platformSpec: { type: platform } },
        status: {
          infrastructureName: `${options.name}-${randomUUID().slice(0, 5)}`,
          platform,
          platformStatus: {
            type: platform,
            ...(platform === "AWS" ? { aws: { region: options.region } } : {}),
          },
          apiServerURL: options.url,
          apiServerInternalURI: options.url,
          controlPlaneTopology: "HighlyAvailable",
          infrastructureTopology: "HighlyAvailable",
          cpuPartitioning: "None",
        },
      },
    },
    {
      resource: "networks",
      object: {
        metadata: cluster("cluster"),
        spec: {
          clusterNetwork: [{ cidr: "10.128.0.0/14", hostPrefix: 23 }],
          serviceNetwork: ["172.30.0.0/16"],
          networkType: options.networkType,
        },
        status: {
          clusterNetwork: [{ cidr: "10.128.0.0/14", hostPrefix: 23 }],
          serviceNetwork: ["172.30.0.0/16"],
          networkType: options.networkType,
          clusterNetworkMTU: 8901,
        },
      },
    },
  ];
}
