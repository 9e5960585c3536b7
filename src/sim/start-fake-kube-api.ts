import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiServer, type ApiFaults, type ApiStats } from "./api-server.ts";
import { JobController } from "./job-controller.ts";
import { FakeKubelet, type FakeImage, type FakeNode } from "./fake-kubelet.ts";
import { ObjectStore, type KubeObject } from "./object-store.ts";

export type { FakeImage, FakeNode, KubeObject, ApiFaults };

export interface FakeKubeApi {
  url: string;
  /** A kubeconfig for the real client, in a temporary directory. */
  kubeconfigPath: string;
  store: ObjectStore;
  kubelet: FakeKubelet;
  stats: ApiStats;
  setFaults(faults: Partial<ApiFaults>): void;
  dropWatches(): void;
  /** Forgets the change history: the next watch that resumes gets 410 Gone. */
  compact(): void;
  /** Jobs ever created, by name (a twin would show as a second creation of one name). */
  jobCreations(): Map<string, number>;
  stop(): Promise<void>;
}

/**
 * A Kubernetes API server on 127.0.0.1 (a free port) that the real @kubernetes/client-node talks
 * to over HTTP: Jobs, Pods, ConfigMaps and Secrets, pod logs, list and watch with
 * resourceVersion, bookmarks, 404/409/410 — with a Job controller and a kubelet that runs pods as
 * local processes on simulated nodes.
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
  } = {},
): Promise<FakeKubeApi> {
  const dir = await mkdtemp(join(tmpdir(), "fake-kube-api-"));
  const store = new ObjectStore(options.historyLimit);
  const controller = new JobController(store, options.timeScale ?? 1);
  const kubelet = new FakeKubelet(store, {
    nodes: options.nodes ?? [
      { name: "node-amd64", labels: { "kubernetes.io/arch": "amd64" } },
      { name: "node-arm64", labels: { "kubernetes.io/arch": "arm64" } },
    ],
    images: options.images ?? {},
    maxRunning: options.maxRunning ?? 4,
    sandboxDir: join(dir, "pods"),
    baseEnv: options.baseEnv ?? { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    imagePullBackOffMs: options.imagePullBackOffMs ?? 100,
  });
  const token = randomBytes(16).toString("hex");
  const creations = new Map<string, number>();
  store.subscribe((event) => {
    if (event.resource === "jobs" && event.type === "ADDED") {
      creations.set(event.object.metadata.name, (creations.get(event.object.metadata.name) ?? 0) + 1);
    }
  });
  const server = new ApiServer(
    store,
    {
      podLog: (namespace, name, container) => kubelet.podLog(namespace, name, container),
      cascade: (resource, object, policy) => controller.cascade(resource, object, policy),
    },
    { bookmarkMs: options.bookmarkMs ?? 1000, random: options.random ?? Math.random, token },
  );
  const port = await server.listen();
  const url = `http://127.0.0.1:${port}`;
  const kubeconfigPath = join(dir, "kubeconfig");
  await writeFile(
    kubeconfigPath,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: fake",
      "  cluster:",
      `    server: ${url}`,
      // Plain HTTP on loopback; the client insists that this be said out loud.
      "    insecure-skip-tls-verify: true",
      "users:",
      "- name: fake",
      "  user:",
      `    token: ${token}`,
      "contexts:",
      "- name: fake",
      "  context:",
      "    cluster: fake",
      "    user: fake",
      "current-context: fake",
      "",
    ].join("\n"),
  );
  return {
    url,
    kubeconfigPath,
    store,
    kubelet,
    stats: server.stats,
    setFaults: (faults) => server.setFaults(faults),
    dropWatches: () => server.dropWatches(),
    compact: () => store.compact(),
    jobCreations: () => new Map(creations),
    async stop() {
      kubelet.stop();
      controller.stop();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
