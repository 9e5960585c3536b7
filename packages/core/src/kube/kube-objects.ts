import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { IN_CLUSTER } from "./in-cluster.ts";
import { kubeApiConfiguration } from "./kube-api-configuration.ts";
import { KubeApiError, limitedKubeCalls } from "./kube-client.ts";
import { loadKubeconfig } from "./load-kubeconfig.ts";

/** The custom resources the cluster sources read and write, by the names the API serves them. */
export const KINDS = {
  clusterVersions: {
    group: "config.openshift.io",
    version: "v1",
    plural: "clusterversions",
    namespaced: false,
  },
  clusterImageSets: {
    group: "hive.openshift.io",
    version: "v1",
    plural: "clusterimagesets",
    namespaced: false,
  },
  clusterPools: { group: "hive.openshift.io", version: "v1", plural: "clusterpools", namespaced: true },
  clusterClaims: { group: "hive.openshift.io", version: "v1", plural: "clusterclaims", namespaced: true },
  clusterDeployments: {
    group: "hive.openshift.io",
    version: "v1",
    plural: "clusterdeployments",
    namespaced: true,
  },
} as const;
/** Core kinds: Secrets (kubeconfigs), and Namespaces (the probes' leftovers on a static cluster). */
type CoreKind = "secrets" | "namespaces";
export type Kind = keyof typeof KINDS | CoreKind;

/** Where a kubeconfig comes from: a file, the bot's service account, or text read from a Secret. */
export type KubeconfigSource = { path: string; context?: string } | { text: string };

/** Objects as JSON: each caller parses what it reads with its own schema. */
export interface KubeObjects {
  readonly name: string;
  /** undefined when it is not there (404). */
  get(kind: Kind, name: string, namespace?: string): Promise<unknown>;
  list(kind: Kind, options: { namespace?: string; labelSelector?: string }): Promise<unknown[]>;
  /** "exists" when an object of that name is there already (409): a retry never makes a twin. */
  create(kind: Kind, body: object, namespace?: string): Promise<"created" | "exists">;
  delete(kind: Kind, name: string, namespace?: string): Promise<"deleted" | "gone">;
  /** A JSON merge patch (RFC 7386) of the object. */
  mergePatch(kind: Exclude<Kind, CoreKind>, name: string, patch: object, namespace?: string): Promise<void>;
}

/**
 * A small client of one API server for the sources' objects (Hive kinds, ClusterVersion, Secrets),
 * each call bounded by a timeout and counted through `onCall`.
 */
export function createKubeObjects(options: {
  name: string;
  kubeconfig: KubeconfigSource;
  timeoutMs: number;
  maxInFlight?: number;
  onCall?: (call: string) => void;
}): KubeObjects {
  const { name: cluster, kubeconfig, timeoutMs, onCall } = options;
  const kubeConfig = new KubeConfig();
  if ("path" in kubeconfig && kubeconfig.path === IN_CLUSTER) kubeConfig.loadFromCluster();
  else loadKubeconfig(kubeConfig, { name: cluster, ...kubeconfig });
  if ("context" in kubeconfig && kubeconfig.context) kubeConfig.setCurrentContext(kubeconfig.context);
  const configuration = kubeApiConfiguration({ kubeConfig, name: cluster, timeoutMs });
  const custom = new CustomObjectsApi(configuration);
  const core = new CoreV1Api(configuration);
  const call = limitedKubeCalls({
    cluster,
    maxInFlight: options.maxInFlight ?? 16,
    ...(onCall ? { onCall } : {}),
  });
  const ns = (kind: Kind, namespace: string | undefined): string => {
    if (kind === "namespaces" || (kind !== "secrets" && !KINDS[kind].namespaced)) return "";
    if (!namespace) throw new Error(`${kind} are namespaced: say which namespace`);
    return namespace;
  };
  /** `value` when the call fails with `status` (404: gone, 409: exists), else the call's own outcome. */
  const unless = async <T, V>(status: number, value: V, run: () => Promise<T>): Promise<T | V> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof KubeApiError && error.status === status) return value;
      throw error;
    }
  };

  return {
    name: cluster,
    get(kind, name, namespace) {
      const namespaceName = ns(kind, namespace);
      return unless(404, undefined, () =>
        call(`get ${kind}`, (): Promise<unknown> => {
          if (kind === "secrets") return core.readNamespacedSecret({ name, namespace: namespaceName });
          if (kind === "namespaces") return core.readNamespace({ name });
          const k = KINDS[kind];
          return namespaceName
            ? custom.getNamespacedCustomObject({ ...k, namespace: namespaceName, name })
            : custom.getClusterCustomObject({ ...k, name });
        }),
      );
    },
    async list(kind, { namespace, labelSelector }) {
      const namespaceName = namespace === undefined ? "" : ns(kind, namespace);
      const result = (await call(`list ${kind}`, () => {
        if (kind === "secrets") return core.listNamespacedSecret({ namespace: namespaceName, labelSelector });
        if (kind === "namespaces") return core.listNamespace({ labelSelector });
        const k = KINDS[kind];
        return namespaceName
          ? custom.listNamespacedCustomObject({ ...k, namespace: namespaceName, labelSelector })
          : custom.listClusterCustomObject({ ...k, labelSelector });
      })) as { items?: unknown[] };
      return result.items ?? [];
    },
    async create(kind, body, namespace) {
      const namespaceName = ns(kind, namespace);
      return unless(409, "exists" as const, async () => {
        await call(`create ${kind}`, (): Promise<unknown> => {
          if (kind === "secrets") return core.createNamespacedSecret({ namespace: namespaceName, body });
          if (kind === "namespaces") return core.createNamespace({ body });
          const k = KINDS[kind];
          return namespaceName
            ? custom.createNamespacedCustomObject({ ...k, namespace: namespaceName, body })
            : custom.createClusterCustomObject({ ...k, body });
        });
        return "created" as const;
      });
    },
    async delete(kind, name, namespace) {
      const namespaceName = ns(kind, namespace);
      return unless(404, "gone" as const, async () => {
        await call(`delete ${kind}`, (): Promise<unknown> => {
          if (kind === "secrets") return core.deleteNamespacedSecret({ name, namespace: namespaceName });
          if (kind === "namespaces") return core.deleteNamespace({ name });
          const k = KINDS[kind];
          return namespaceName
            ? custom.deleteNamespacedCustomObject({ ...k, namespace: namespaceName, name })
            : custom.deleteClusterCustomObject({ ...k, name });
        });
        return "deleted" as const;
      });
    },
    async mergePatch(kind, name, patch, namespace) {
      const namespaceName = ns(kind, namespace);
      const k = KINDS[kind];
      const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
      await call(`patch ${kind}`, () =>
        namespaceName
          ? custom.patchNamespacedCustomObject({ ...k, namespace: namespaceName, name, body: patch }, merge)
          : custom.patchClusterCustomObject({ ...k, name, body: patch }, merge),
      );
    },
  };
}
