/** A pod as the extension needs to see it. */
export interface ProbePodStatus {
  name: string;
  uid: string;
  nodeName: string;
  phase: string;
  podIP: string;
  hostIP: string;
  ready: boolean;
  deleting: boolean;
  /** Why it is not running, when the kubelet said (ErrImagePull, CrashLoopBackOff, …). */
  waitingReason?: string;
}

export interface ProbeNode {
  name: string;
  /** Ready, not cordoned, no NoSchedule/NoExecute taint: probe pods can run there. */
  schedulable: boolean;
}

/** Where ClusterVersion stands: the image it wants and the history of updates. */
export interface ClusterVersionState {
  desiredImage: string;
  history: { state: string; image: string; version?: string }[];
}

/**
 * The calls the extension makes to the cluster under test (the port; `kubeProbeCluster` is the
 * Kubernetes API adapter). Reads of what is not there resolve undefined; deletes of what is gone succeed.
 */
export interface ProbeCluster {
  nodes(): Promise<ProbeNode[]>;
  createNamespace(name: string, labels: Record<string, string>): Promise<void>;
  deleteNamespace(name: string): Promise<void>;
  namespaceExists(name: string): Promise<boolean>;
  /** Grants the namespace's default service account a ClusterRole, where RBAC is served. */
  bindClusterRole(namespace: string, name: string, clusterRole: string): Promise<void>;
  createPod(namespace: string, pod: object): Promise<void>;
  readPod(namespace: string, name: string): Promise<ProbePodStatus | undefined>;
  listPods(namespace: string, labelSelector: string): Promise<ProbePodStatus[]>;
  deletePod(namespace: string, name: string): Promise<void>;
  podLog(namespace: string, name: string): Promise<string | undefined>;
  /** Creates the Service and answers its ClusterIP. */
  createService(namespace: string, service: object): Promise<string>;
  /** The holder named by a Lease (coordination.k8s.io) or a ConfigMap leader annotation. */
  leaseHolder(namespace: string, name: string): Promise<string | undefined>;
  clusterVersion(): Promise<ClusterVersionState | undefined>;
  requestUpdate(image: string): Promise<void>;
}
