import type { V1Container, V1Job, V1Pod } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { RUN_ID_ANNOTATION } from "@netstress/core/kube/netstress-labels.ts";
import type { KubeClient } from "@netstress/core/kube/kube-client.ts";
import { watchCollection } from "@netstress/core/kube/watched-collection.ts";

const JOB_NAME_LABEL = "batch.kubernetes.io/job-name";
const LEGACY_JOB_NAME_LABEL = "job-name";

/**
 * One cluster as the executor sees it: its client, and watched copies of our Jobs and their pods,
 * with listeners per Job. A deleted pod is remembered (as last seen) until its Job goes, because
 * a pod that vanished with its node is the only trace a lost node leaves.
 */
export interface ClusterRuntime {
  readonly name: string;
  readonly client: KubeClient;
  /** Resolves once both Jobs and pods have been listed. */
  readonly ready: Promise<void>;
  job(name: string): V1Job | undefined;
  jobs(): IterableIterator<V1Job>;
  pods(jobName: string): V1Pod[];
  /** Calls back whenever the Job or one of its pods changes. */
  onChange(jobName: string, listener: () => void): () => void;
  stop(): void;
}

export function createClusterRuntime(options: {
  client: KubeClient;
  /** Our Jobs and pods (managedSelector). */
  labelSelector: string;
  logger: Logger;
  idleMs: number;
}): ClusterRuntime {
  const { client, logger } = options;
  const podsByJob = new Map<string, Map<string, V1Pod>>();
  const listeners = new Map<string, Set<() => void>>();
  const notify = (jobName: string) => {
    for (const listener of listeners.get(jobName) ?? []) listener();
  };
  const jobOfPod = (pod: V1Pod) =>
    pod.metadata?.labels?.[JOB_NAME_LABEL] ?? pod.metadata?.labels?.[LEGACY_JOB_NAME_LABEL];
  const common = {
    client,
    labelSelector: options.labelSelector,
    logger,
    idleMs: options.idleMs,
  };
  const jobs = watchCollection<V1Job>({
    ...common,
    resource: "jobs",
    keep: keepOfJob,
    onChange: (change) => {
      const name = change.object.metadata?.name;
      if (!name) return;
      if (change.type === "delete") podsByJob.delete(name);
      notify(name);
    },
  });
  const pods = watchCollection<V1Pod>({
    ...common,
    resource: "pods",
    keep: keepOfPod,
    onChange: (change) => {
      const jobName = jobOfPod(change.object);
      const podName = change.object.metadata?.name;
      if (!jobName || !podName) return;
      if (change.type === "delete" && !jobs.get(jobName)) {
        // The Job went first (a cascade): nothing left to judge.
        podsByJob.delete(jobName);
        return;
      }
      let byName = podsByJob.get(jobName);
      if (!byName) podsByJob.set(jobName, (byName = new Map()));
      // Deleted pods stay, as last seen: see above.
      if (change.type === "upsert" || !byName.has(podName)) byName.set(podName, change.object);
      notify(jobName);
    },
  });
  return {
    name: client.cluster,
    client,
    ready: Promise.all([jobs.ready, pods.ready]).then(() => undefined),
    job: (name) => jobs.get(name),
    jobs: () => jobs.values(),
    pods: (jobName) => [...(podsByJob.get(jobName)?.values() ?? [])],
    onChange(jobName, listener) {
      let set = listeners.get(jobName);
      if (!set) listeners.set(jobName, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(jobName);
      };
    },
    stop() {
      jobs.stop();
      pods.stop();
    },
  };
}

/** What the executor reads of a Job: identity, deadline, conditions. */
function keepOfJob(job: V1Job): V1Job {
  const runId = job.metadata?.annotations?.[RUN_ID_ANNOTATION];
  return {
    metadata: {
      name: job.metadata?.name,
      resourceVersion: job.metadata?.resourceVersion,
      labels: job.metadata?.labels,
      ...(runId ? { annotations: { [RUN_ID_ANNOTATION]: runId } } : {}),
    },
    spec: { activeDeadlineSeconds: job.spec?.activeDeadlineSeconds, template: {} },
    ...(job.status ? { status: { conditions: job.status.conditions } } : {}),
  };
}

/** What judging an iteration reads of a pod: identity, node, containers' names and images, status. */
function keepOfPod(pod: V1Pod): V1Pod {
  const container = (c: V1Container) => ({
    name: c.name,
    image: c.image,
    ...(c.resources?.limits?.memory ? { resources: { limits: { memory: c.resources.limits.memory } } } : {}),
  });
  return {
    metadata: {
      name: pod.metadata?.name,
      resourceVersion: pod.metadata?.resourceVersion,
      labels: pod.metadata?.labels,
    },
    spec: {
      nodeName: pod.spec?.nodeName,
      containers: (pod.spec?.containers ?? []).map(container),
      initContainers: (pod.spec?.initContainers ?? []).map(container),
    },
    ...(pod.status ? { status: pod.status } : {}),
  };
}
