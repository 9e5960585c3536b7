import { archSchema, type Arch } from "@netstress/core/arch/arch.ts";
import { clusterUnderTestObjects, componentWorkloads } from "./cluster-under-test-objects.ts";
import { ClusterVersionOperator } from "./cluster-version-operator.ts";
import type { FakeNode } from "./fake-kubelet.ts";
import type { KubeObject } from "./object-store.ts";
import { SimError } from "./sim-error.ts";
import type { ComponentBuild, ResolveRelease, SimulatedRelease } from "./simulated-release.ts";
import { startFakeKubeApi, type FakeKubeApi } from "./start-fake-kube-api.ts";

export interface SimulatedCluster {
  name: string;
  arch: Arch;
  url: string;
  /** The admin kubeconfig (HTTPS, its own CA, a bearer token), in a temporary directory. */
  kubeconfigPath: string;
  kubeconfig: string;
  api: FakeKubeApi;
  /** The payload the cluster runs now (ClusterVersion's completed desired image). */
  payload(): string;
  /** Makes the cluster unreachable, as a lost cluster: its API server stops answering. */
  stop(): Promise<void>;
}

/**
 * A cluster under test on loopback: an HTTPS Kubernetes API whose ClusterVersion reports the
 * payload it runs, whose nodes (3 control-plane, `nodes` workers) are of `arch`, with
 * Infrastructure and Network objects (`networkType` OVNKubernetes by default) and the payload's
 * component builds on their workloads (the `ovnkube-node` DaemonSet runs the `ovn-kubernetes`
 * tag's image, annotated with its commit). `spec.desiredUpdate` with `force: true` upgrades it to
 * another payload in `upgradeMs`, resolved by `resolveRelease` (default: same components, the
 * version asked for).
 */
export async function startSimulatedCluster(options: {
  arch: Arch;
  /** The release image it runs: a pullspec by digest, as ClusterVersion shows it. */
  payload: string;
  /** The release's version (default 4.20.0). */
  version?: string;
  /** The payload's component builds by tag (what its image-references says). */
  components?: Record<string, ComponentBuild>;
  /** Worker nodes (default 3). */
  nodes?: number;
  upgradeMs?: number;
  resolveRelease?: ResolveRelease;
  name?: string;
  /** Infrastructure platform type (default AWS) and region (default us-east-1). */
  platform?: string;
  region?: string;
  networkType?: string;
}): Promise<SimulatedCluster> {
  const arch = archSchema.safeParse(options.arch);
  if (!arch.success) {
    throw new SimError(
      `a simulated cluster's arch must be one of ${archSchema.options.join(", ")}, not ${JSON.stringify(options.arch)}`,
    );
  }
  if (typeof options.payload !== "string" || options.payload.trim() === "") {
    throw new SimError(
      "a simulated cluster needs the payload it runs: a release image pullspec, e.g. quay.io/org/release@sha256:…",
    );
  }
  const workers = options.nodes ?? 3;
  if (!Number.isInteger(workers) || workers < 1 || workers > 100) {
    throw new SimError(`a simulated cluster has 1 to 100 worker nodes, not ${String(options.nodes)}`);
  }
  const name = options.name ?? `sim-${arch.data}-${Math.random().toString(36).slice(2, 7)}`;
  const nodes: FakeNode[] = [
    ...[0, 1, 2].map((i) => ({
      name: `${name}-master-${i}`,
      labels: {
        "kubernetes.io/arch": arch.data,
        "node-role.kubernetes.io/control-plane": "",
        "node-role.kubernetes.io/master": "",
      },
    })),
    ...Array.from({ length: workers }, (_, i) => ({
      name: `${name}-worker-${i}`,
      labels: { "kubernetes.io/arch": arch.data, "node-role.kubernetes.io/worker": "" },
    })),
  ];
  const api = await startFakeKubeApi({ tls: true, name, nodes });
  const networkType = options.networkType ?? "OVNKubernetes";
  const initial: SimulatedRelease = {
    version: options.version ?? "4.20.0",
    components: options.components ?? {},
  };
  for (const { resource, object } of clusterUnderTestObjects({
    name,
    url: api.url,
    arch: arch.data,
    payload: options.payload,
    version: initial.version,
    platform: options.platform ?? "AWS",
    region: options.region ?? "us-east-1",
    networkType,
  })) {
    api.store.create(resource, object);
  }
  const roll = (release: SimulatedRelease) => {
    for (const workload of componentWorkloads({ components: release.components, networkType })) {
      const { namespace, name: workloadName } = workload.metadata;
      if (!api.store.get("namespaces", "", namespace)) {
        api.store.create("namespaces", {
          metadata: { name: namespace, namespace: "" },
          status: { phase: "Active" },
        });
      }
      const replace = (o: KubeObject) => {
        o.metadata.annotations = workload.metadata.annotations;
        o.spec = workload.spec;
      };
      if (!api.store.update("daemonsets", namespace, workloadName, replace))
        api.store.create("daemonsets", workload);
    }
  };
  roll(initial);
  const operator = new ClusterVersionOperator(api.store, {
    upgradeMs: options.upgradeMs ?? 2000,
    resolveRelease:
      options.resolveRelease ??
      (() => ({
        version: String(
          (
            api.store.get("clusterversions", "", "version")?.spec?.desiredUpdate as
              { version?: string } | undefined
          )?.version ?? initial.version,
        ),
        components: initial.components,
      })),
    roll,
  });
  let stopped: Promise<void> | undefined;
  return {
    name,
    arch: arch.data,
    url: api.url,
    kubeconfigPath: api.kubeconfigPath,
    kubeconfig: api.kubeconfig,
    api,
    payload() {
      const status = api.store.get("clusterversions", "", "version")?.status as
        { history?: { state: string; image: string }[] } | undefined;
      return status?.history?.find((h) => h.state === "Completed")?.image ?? options.payload;
    },
    stop() {
      operator.stop();
      stopped ??= api.stop();
      return stopped;
    },
  };
}
