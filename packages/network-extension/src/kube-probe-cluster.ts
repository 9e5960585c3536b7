import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1Pod,
} from "@kubernetes/client-node";
import { kubeApiConfiguration } from "@netstress/core/kube/kube-api-configuration.ts";
import { KubeError } from "@netstress/core/kube/kube-error.ts";
import { ExtError } from "./ext-error.ts";
import type { ClusterVersionState, ProbeCluster, ProbePodStatus } from "./probe-cluster.ts";

const CLUSTER_VERSION = {
  group: "config.openshift.io",
  version: "v1",
  plural: "clusterversions",
  name: "version",
};

/**
 * The cluster under test through its kubeconfig (`KUBECONFIG`), with @kubernetes/client-node.
 * Every call has a timeout, so an API server that stops answering fails the call, not the test's clock.
 */
export function kubeProbeCluster(options: { kubeconfig: string; timeoutMs?: number }): ProbeCluster {
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(options.kubeconfig);
  } catch (cause) {
    throw new ExtError(`cannot read the kubeconfig ${options.kubeconfig}: ${(cause as Error).message}`, {
      code: "ext-cluster",
      cause,
    });
  }
  let configuration;
  try {
    configuration = kubeApiConfiguration({
      kubeConfig,
      name: options.kubeconfig,
      timeoutMs: options.timeoutMs ?? 30_000,
    });
  } catch (cause) {
    if (!(cause instanceof KubeError)) throw cause;
    throw new ExtError(`the kubeconfig ${options.kubeconfig} names no server (clusters[].cluster.server)`, {
      code: "ext-cluster",
      cause,
    });
  }
  // There is one: kubeApiConfiguration refuses a kubeconfig that names none.
  const server = kubeConfig.getCurrentCluster()!.server;
  const core = new CoreV1Api(configuration);
  const custom = new CustomObjectsApi(configuration);
  const coordination = new CoordinationV1Api(configuration);
  const rbac = new RbacAuthorizationV1Api(configuration);

  const call = async <T>(
    what: string,
    run: () => Promise<T>,
    absent?: readonly number[],
  ): Promise<T | undefined> => {
    try {
      return await run();
    } catch (cause) {
      const status = cause instanceof ApiException ? cause.code : undefined;
      if (status !== undefined && absent?.includes(status)) return undefined;
      const why = status !== undefined ? `HTTP ${status}` : (cause as Error).message;
      throw new ExtError(`${what} on ${server}: ${why}`, { code: "ext-cluster", cause });
    }
  };

  return {
    async nodes() {
      const list = await call("list nodes", () => core.listNode());
      return (list?.items ?? []).map((node) => ({
        name: node.metadata?.name ?? "",
        schedulable:
          !node.spec?.unschedulable &&
          (node.spec?.taints ?? []).every((t) => t.effect !== "NoSchedule" && t.effect !== "NoExecute") &&
          (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
      }));
    },
    async createNamespace(name, labels) {
      await call(`create namespace ${name}`, () =>
        core.createNamespace({ body: { metadata: { name, labels } } }),
      );
    },
    async deleteNamespace(name) {
      await call(`delete namespace ${name}`, () => core.deleteNamespace({ name }), [404]);
    },
    async namespaceExists(name) {
      return (await call(`read namespace ${name}`, () => core.readNamespace({ name }), [404])) !== undefined;
    },
    async bindClusterRole(namespace, name, clusterRole) {
      // 404: the cluster serves no RBAC (a simulated one); there is nothing to grant.
      await call(
        `create rolebinding ${namespace}/${name}`,
        () =>
          rbac.createNamespacedRoleBinding({
            namespace,
            body: {
              metadata: { name, namespace },
              roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterRole },
              subjects: [{ kind: "ServiceAccount", name: "default", namespace }],
            },
          }),
        [404],
      );
    },
    async createPod(namespace, pod) {
      await call(`create pod in ${namespace}`, () =>
        core.createNamespacedPod({ namespace, body: pod as V1Pod }),
      );
    },
    async readPod(namespace, name) {
      const pod = await call(
        `read pod ${namespace}/${name}`,
        () => core.readNamespacedPod({ namespace, name }),
        [404],
      );
      return pod ? podStatus(pod) : undefined;
    },
    async listPods(namespace, labelSelector) {
      const list = await call(`list pods in ${namespace}`, () =>
        core.listNamespacedPod({ namespace, labelSelector }),
      );
      return (list?.items ?? []).map(podStatus);
    },
    async deletePod(namespace, name) {
      await call(
        `delete pod ${namespace}/${name}`,
        () => core.deleteNamespacedPod({ namespace, name }),
        [404],
      );
    },
    async podLog(namespace, name) {
      const log = await call(
        `read the log of pod ${namespace}/${name}`,
        () => core.readNamespacedPodLog({ namespace, name }),
        [404],
      );
      return log === undefined ? undefined : String(log);
    },
    async createService(namespace, service) {
      const created = await call(`create service in ${namespace}`, () =>
        core.createNamespacedService({ namespace, body: service }),
      );
      const ip = created?.spec?.clusterIP;
      if (!ip || ip === "None") {
        throw new ExtError(`the cluster gave the probe Service in ${namespace} no ClusterIP`, {
          code: "ext-probes",
        });
      }
      return ip;
    },
    async leaseHolder(namespace, name) {
      const lease = await call(
        `read lease ${namespace}/${name}`,
        () => coordination.readNamespacedLease({ namespace, name }),
        [404],
      );
      if (lease?.spec?.holderIdentity) return lease.spec.holderIdentity;
      const map = await call(
        `read configmap ${namespace}/${name}`,
        () => core.readNamespacedConfigMap({ namespace, name }),
        [404],
      );
      const record = map?.metadata?.annotations?.["control-plane.alpha.kubernetes.io/leader"];
      if (!record) return undefined;
      try {
        return (JSON.parse(record) as { holderIdentity?: string }).holderIdentity || undefined;
      } catch {
        return undefined;
      }
    },
    async clusterVersion() {
      const object = (await call(
        "read clusterversion version",
        () => custom.getClusterCustomObject(CLUSTER_VERSION),
        [404],
      )) as
        | {
            spec?: { desiredUpdate?: { image?: string } };
            status?: { desired?: { image?: string }; history?: ClusterVersionState["history"] };
          }
        | undefined;
      if (!object) return undefined;
      return {
        desiredImage: object.status?.desired?.image ?? object.spec?.desiredUpdate?.image ?? "",
        history: object.status?.history ?? [],
      };
    },
    async requestUpdate(image) {
      const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
      await call("patch clusterversion version", () =>
        custom.patchClusterCustomObject(
          { ...CLUSTER_VERSION, body: { spec: { desiredUpdate: { image, force: true } } } },
          merge,
        ),
      );
    },
  };
}

function podStatus(pod: V1Pod): ProbePodStatus {
  const waiting = pod.status?.containerStatuses?.find((c) => c.state?.waiting)?.state?.waiting?.reason;
  return {
    name: pod.metadata?.name ?? "",
    uid: pod.metadata?.uid ?? "",
    nodeName: pod.spec?.nodeName ?? "",
    phase: pod.status?.phase ?? "Pending",
    podIP: pod.status?.podIP ?? "",
    hostIP: pod.status?.hostIP ?? "",
    ready: (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
    deleting: Boolean(pod.metadata?.deletionTimestamp),
    ...(waiting ? { waitingReason: waiting } : {}),
  };
}
