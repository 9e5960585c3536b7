import pLimit from "p-limit";
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  Watch,
  type V1Job,
  type V1Pod,
  type V1Secret,
} from "@kubernetes/client-node";
import { IN_CLUSTER } from "./in-cluster.ts";
import { kubeApiConfiguration } from "./kube-api-configuration.ts";
import { KubeError } from "./kube-error.ts";

/** A failed API call: `status` is the HTTP status (undefined when no answer came). */
export class KubeApiError extends KubeError {
  override readonly name = "KubeApiError";
  readonly status: number | undefined;
  constructor(message: string, status: number | undefined, cause: unknown) {
    super("kube-api", message, { cause });
    this.status = status;
  }
  /** Worth trying again: no answer, or the server's own trouble. */
  get transient(): boolean {
    return this.status === undefined || this.status === 429 || this.status >= 500;
  }
}

export interface WatchHandlers {
  onEvent(type: string, object: { metadata?: { resourceVersion?: string } } & Record<string, unknown>): void;
  onDone(error: unknown): void;
}

/** The few calls the executor makes to one cluster, each bounded by a timeout. */
export interface KubeClient {
  readonly cluster: string;
  readonly namespace: string;
  /**
   * The created Job's uid (what an owner reference names), or "exists" when a Job of that name is
   * already there (409): a retry never makes a twin.
   */
  createJob(job: V1Job): Promise<{ uid: string | undefined } | "exists">;
  /** Deletes the Job and, in the background, its pods. "gone" when it was not there. */
  deleteJob(name: string): Promise<"deleted" | "gone">;
  /** The Job as the server has it (its uid), or undefined when there is none. */
  readJob(name: string): Promise<V1Job | undefined>;
  /** "exists" when a Secret of that name is already there (409). */
  createSecret(secret: V1Secret): Promise<"created" | "exists">;
  /** Replaces the Secret of that name (its data, labels and owners) with this one. */
  replaceSecret(secret: V1Secret): Promise<void>;
  /** "gone" when it was not there. */
  deleteSecret(name: string): Promise<"deleted" | "gone">;
  readPodLog(pod: string, container: string): Promise<string>;
  listJobs(labelSelector: string): Promise<{ items: V1Job[]; resourceVersion: string }>;
  listPods(labelSelector: string): Promise<{ items: V1Pod[]; resourceVersion: string }>;
  /** Starts a watch; the returned function stops it. */
  watch(
    resource: "jobs" | "pods",
    params: { labelSelector: string; resourceVersion: string; timeoutSeconds: number },
    handlers: WatchHandlers,
  ): Promise<() => void>;
}

/** The cluster a client talks to: its name, the namespace of its Jobs, and how to reach its API. */
export interface KubeClientTarget {
  name: string;
  namespace: string;
  /** A kubeconfig file's path, or IN_CLUSTER. */
  kubeconfig: string;
  context?: string;
}

export function createKubeClient(options: {
  cluster: KubeClientTarget;
  timeoutMs: number;
  /** Requests in flight at once (watches apart): a thousand dispatches queue here, not in sockets. */
  maxInFlight?: number;
  /** Sees every request, e.g. to count API calls per shard. */
  onCall?: (call: string) => void;
}): KubeClient {
  const { cluster, timeoutMs, onCall } = options;
  const kubeConfig = new KubeConfig();
  if (cluster.kubeconfig === IN_CLUSTER) kubeConfig.loadFromCluster();
  else kubeConfig.loadFromFile(cluster.kubeconfig);
  if (cluster.context) kubeConfig.setCurrentContext(cluster.context);
  const configuration = kubeApiConfiguration({ kubeConfig, name: cluster.name, timeoutMs });
  const batch = new BatchV1Api(configuration);
  const core = new CoreV1Api(configuration);
  const namespace = cluster.namespace;
  const watcher = new Watch(kubeConfig);

  const call = limitedKubeCalls({
    cluster: cluster.name,
    maxInFlight: options.maxInFlight ?? 32,
    ...(onCall ? { onCall } : {}),
  });

  return {
    cluster: cluster.name,
    namespace,
    async createJob(job) {
      try {
        const made = await call("create job", () => batch.createNamespacedJob({ namespace, body: job }));
        return { uid: made.metadata?.uid };
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 409) return "exists";
        throw error;
      }
    },
    async deleteJob(name) {
      try {
        await call("delete job", () =>
          batch.deleteNamespacedJob({ name, namespace, propagationPolicy: "Background" }),
        );
        return "deleted";
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 404) return "gone";
        throw error;
      }
    },
    async readJob(name) {
      try {
        return await call("read job", () => batch.readNamespacedJob({ name, namespace }));
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 404) return undefined;
        throw error;
      }
    },
    async createSecret(secret) {
      try {
        await call("create secret", () => core.createNamespacedSecret({ namespace, body: secret }));
        return "created";
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 409) return "exists";
        throw error;
      }
    },
    async replaceSecret(secret) {
      const name = secret.metadata!.name!;
      await call("replace secret", () => core.replaceNamespacedSecret({ name, namespace, body: secret }));
    },
    async deleteSecret(name) {
      try {
        await call("delete secret", () => core.deleteNamespacedSecret({ name, namespace }));
        return "deleted";
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 404) return "gone";
        throw error;
      }
    },
    readPodLog: (pod, container) =>
      call("read pod log", () => core.readNamespacedPodLog({ name: pod, namespace, container })),
    async listJobs(labelSelector) {
      const list = await call("list jobs", () => batch.listNamespacedJob({ namespace, labelSelector }));
      return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? "" };
    },
    async listPods(labelSelector) {
      const list = await call("list pods", () => core.listNamespacedPod({ namespace, labelSelector }));
      return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? "" };
    },
    async watch(resource, params, handlers) {
      const path =
        resource === "jobs"
          ? `/apis/batch/v1/namespaces/${namespace}/jobs`
          : `/api/v1/namespaces/${namespace}/pods`;
      const controller = await watcher.watch(
        path,
        { ...params, allowWatchBookmarks: true },
        (type, object) => handlers.onEvent(type, object as Parameters<WatchHandlers["onEvent"]>[1]),
        handlers.onDone,
      );
      return () => controller.abort();
    },
  };
}

/** Reads a failed call (an API status, or no answer) as a KubeApiError naming the cluster and call. */
export function toKubeApiError(cluster: string, what: string, error: unknown): KubeApiError {
  if (error instanceof ApiException) {
    const message = statusMessage(error.body) ?? `HTTP ${error.code}`;
    return new KubeApiError(`${cluster}: ${what}: ${message}`, error.code, error);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new KubeApiError(`${cluster}: ${what}: ${reason}`, undefined, error);
}

/** The message of a Kubernetes Status body, parsed or not. */
function statusMessage(body: unknown): string | undefined {
  let value = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return body.slice(0, 200) || undefined;
    }
  }
  const message = (value as { message?: unknown } | undefined)?.message;
  return typeof message === "string" ? message : undefined;
}

/** One Kubernetes API call: what it is (for counting and errors) and how to make it. */
export type KubeCall = <T>(what: string, run: () => Promise<T>) => Promise<T>;

/**
 * How every client of ours calls a cluster's API: at most `maxInFlight` at once (the rest queue
 * here, not in sockets), each seen by `onCall`, and every failure a KubeApiError naming the cluster.
 */
export function limitedKubeCalls(options: {
  cluster: string;
  maxInFlight: number;
  onCall?: (call: string) => void;
}): KubeCall {
  const limit = pLimit(options.maxInFlight);
  return (what, run) =>
    limit(async () => {
      options.onCall?.(what);
      try {
        return await run();
      } catch (error) {
        throw toKubeApiError(options.cluster, what, error);
      }
    });
}
