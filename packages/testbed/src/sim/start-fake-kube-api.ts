import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { admitHiveObject } from "./admit-hive-object.ts";
import { ApiServer, type ApiFaults, type ApiStats } from "./api-server.ts";
import { DaemonSetController } from "./daemon-set-controller.ts";
import { KUBERNETES_VERSION } from "./discovery-document.ts";
import { FakeKubelet, type FakeImage, type FakeNode } from "./fake-kubelet.ts";
import { generateServingCertificate } from "./generate-serving-certificate.ts";
import { JobController } from "./job-controller.ts";
import { kubeconfigYaml } from "./kubeconfig-yaml.ts";
import { ObjectStore, type KubeObject } from "./object-store.ts";
import type { PodNetwork } from "./pod-network.ts";
import { RESOURCE_TYPES } from "./resource-types.ts";
import { ServiceController } from "./service-controller.ts";

export type { FakeImage, FakeNode, KubeObject, ApiFaults, PodNetwork };

export interface FakeKubeApi {
  url: string;
  /** A kubeconfig for the real client and kubectl, in a temporary directory. */
  kubeconfigPath: string;
  /** The same kubeconfig as YAML text (what a Secret would carry). */
  kubeconfig: string;
  /** The CA that signed the server's certificate (PEM); undefined over plain HTTP. */
  caPem: string | undefined;
  store: ObjectStore;
  kubelet: FakeKubelet;
  stats: ApiStats;
  setFaults(faults: Partial<ApiFaults>): void;
  dropWatches(): void;
  /** Forgets the change history: the next watch that resumes gets 410 Gone. */
  compact(): void;
  /** Jobs ever created, by name (a twin would show as a second creation of one name). */
  jobCreations(): Map<string, number>;
  /**
   * The path of a kubeconfig whose token is a service account's: what it may do is decided by the
   * Roles, ClusterRoles and bindings in the store (the admin kubeconfig may do anything).
   */
  serviceAccountKubeconfig(namespace: string, name: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A Kubernetes API server on 127.0.0.1 (a free port) that the real @kubernetes/client-node and
 * kubectl talk to: discovery, every type in RESOURCE_TYPES (Jobs, Pods, Secrets, Nodes, OpenShift's
 * config kinds, Hive's kinds), pod logs, get/list/watch/create/update/patch/delete with
 * resourceVersion, bookmarks, Tables, 404/409/410 — with a Job controller and a kubelet that runs
 * pods as local processes on simulated nodes, which are also served as Node objects. Over HTTPS
 * (`tls: true`) with a CA of its own in the kubeconfig; plain HTTP by default, as the build-farm
 * tests use it.
 */
export async function startFakeKubeApi(
  options: {
    nodes?: FakeNode[];
    images?: Record<string, FakeImage>;
    maxRunning?: number;
    /** Host environment of every container (default: PATH only). */
    baseEnv?: Record<string, string>;
    bookmarkMs?: number;
    /** Scales the Job controller's durations (activeDeadlineSeconds, TTL). */
    timeScale?: number;
    historyLimit?: number;
    random?: () => number;
    imagePullBackOffMs?: number;
    /** Serve HTTPS with a freshly generated CA (default false: plain HTTP). */
    tls?: boolean;
    /** The cluster's name in the kubeconfig and its certificates (default "fake"). */
    name?: string;
    /** More addresses the HTTPS certificate is valid for (where a relay makes the server reachable). */
    tlsAddresses?: string[];
    /** Puts pods in networks of their own (the lab's); default: they run as host processes. */
    podNetwork?: PodNetwork;
    /** Deleting a pod gives its process its termination grace before SIGKILL (default false). */
    gracefulTermination?: boolean;
    /** Run DaemonSets' pods, one per node (default false: DaemonSets are only described). */
    daemonSetPods?: boolean;
    /** Where Services' ClusterIPs come from (default 172.30.0.0/16). */
    serviceCIDR?: string;
  } = {},
): Promise<FakeKubeApi> {
  const dir = await mkdtemp(join(tmpdir(), "fake-kube-api-"));
  const store = new ObjectStore(options.historyLimit);
  const nodes = options.nodes ?? [
    { name: "node-amd64", labels: { "kubernetes.io/arch": "amd64" } },
    { name: "node-arm64", labels: { "kubernetes.io/arch": "arm64" } },
  ];
  const controller = new JobController(store, options.timeScale ?? 1);
  const kubelet = new FakeKubelet(store, {
    nodes,
    images: options.images ?? {},
    maxRunning: options.maxRunning ?? 4,
    sandboxDir: join(dir, "pods"),
    baseEnv: options.baseEnv ?? { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    imagePullBackOffMs: options.imagePullBackOffMs ?? 100,
    ...(options.podNetwork ? { podNetwork: options.podNetwork } : {}),
    gracefulTermination: options.gracefulTermination ?? false,
  });
  const services = new ServiceController(store, { serviceCIDR: options.serviceCIDR ?? "172.30.0.0/16" });
  const daemonSets = options.daemonSetPods ? new DaemonSetController(store) : undefined;
  const token = randomBytes(16).toString("hex");
  const creations = new Map<string, number>();
  store.subscribe((event) => {
    if (event.resource === "jobs" && event.type === "ADDED") {
      creations.set(event.object.metadata.name, (creations.get(event.object.metadata.name) ?? 0) + 1);
    }
  });
  const name = options.name ?? "fake";
  const certificate = options.tls
    ? await generateServingCertificate({ name, ipAddresses: options.tlsAddresses ?? [] })
    : undefined;
  const server = new ApiServer(
    store,
    {
      podLog: (namespace, name, container) => kubelet.podLog(namespace, name, container),
      cascade: (resource, object, policy) => {
        controller.cascade(resource, object, policy);
        if (resource === "namespaces") deleteNamespaceContents(store, object.metadata.name);
      },
      admit: (resource, object) => {
        admitHiveObject(resource, object);
        services.admit(resource, object);
      },
    },
    {
      bookmarkMs: options.bookmarkMs ?? 1000,
      random: options.random ?? Math.random,
      token,
      ...(certificate ? { tls: certificate } : {}),
    },
  );
  for (const node of nodes) store.create("nodes", nodeObject(node));
  const port = await server.listen();
  const url = `${certificate ? "https" : "http"}://127.0.0.1:${port}`;
  const kubeconfigPath = join(dir, "kubeconfig");
  const kubeconfig = kubeconfigYaml({
    name,
    server: url,
    token,
    ...(certificate ? { caPem: certificate.caPem } : {}),
  });
  await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });
  return {
    url,
    kubeconfigPath,
    kubeconfig,
    caPem: certificate?.caPem,
    store,
    kubelet,
    stats: server.stats,
    setFaults: (faults) => server.setFaults(faults),
    dropWatches: () => server.dropWatches(),
    compact: () => store.compact(),
    jobCreations: () => new Map(creations),
    async serviceAccountKubeconfig(namespace, account) {
      const accountToken = randomBytes(16).toString("hex");
      server.addToken(accountToken, {
        user: `system:serviceaccount:${namespace}:${account}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
      });
      const path = join(dir, `kubeconfig-${namespace}-${account}`);
      const text = kubeconfigYaml({
        name,
        server: url,
        token: accountToken,
        ...(certificate ? { caPem: certificate.caPem } : {}),
      });
      await writeFile(path, text, { mode: 0o600 });
      return path;
    },
    async stop() {
      kubelet.stop();
      controller.stop();
      services.stop();
      daemonSets?.stop();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The namespace controller: a deleted namespace takes everything in it along (pods are then killed). */
function deleteNamespaceContents(store: ObjectStore, namespace: string): void {
  for (const type of RESOURCE_TYPES.filter((t) => t.namespaced)) {
    for (const object of store.list(type.resource, namespace, () => true).items) {
      try {
        store.delete(type.resource, namespace, object.metadata.name);
      } catch {
        // already gone
      }
    }
  }
}

/** A Ready node as the kubelet registers it, its arch from `kubernetes.io/arch`. */
function nodeObject(node: FakeNode): KubeObject {
  const arch = node.labels["kubernetes.io/arch"] ?? "amd64";
  return {
    metadata: {
      name: node.name,
      namespace: "",
      labels: { "kubernetes.io/os": "linux", "kubernetes.io/hostname": node.name, ...node.labels },
    },
    spec: node.podCIDR ? { podCIDR: node.podCIDR, podCIDRs: [node.podCIDR] } : {},
    status: {
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "kubelet is posting ready status",
          lastTransitionTime: new Date().toISOString(),
        },
      ],
      addresses: [
        { type: "InternalIP", address: node.internalIP ?? "127.0.0.1" },
        { type: "Hostname", address: node.name },
      ],
      nodeInfo: {
        architecture: arch,
        operatingSystem: "linux",
        kubeletVersion: KUBERNETES_VERSION.gitVersion,
        containerRuntimeVersion: "cri-o://1.33.2",
        osImage: "Red Hat Enterprise Linux CoreOS (simulated)",
      },
    },
  };
}
