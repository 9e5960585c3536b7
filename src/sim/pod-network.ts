/** The pod a network is asked to attach, as the kubelet knows it once the pod is bound to a node. */
export interface PodNetworkRequest {
  namespace: string;
  name: string;
  uid: string;
  nodeName: string;
  /** `spec.hostNetwork`: the pod shares its node's network (no namespace, the node's address). */
  hostNetwork: boolean;
}

/** What the kubelet gets back: the pod's addresses and how to start a process inside its network. */
export interface PodNetworkAttachment {
  podIP: string;
  hostIP: string;
  /** The argv that runs `argv` inside the pod's network (e.g. `ip netns exec <ns> …argv`). */
  wrap(argv: string[]): string[];
  /** Environment every container of the pod gets besides its own (KUBERNETES_SERVICE_HOST/PORT, …). */
  env: Record<string, string>;
}

/**
 * The kubelet's network plugin (a CNI, in a real one): set up before a pod's first container
 * starts, torn down once its last process is gone. Supplied by whoever runs the kubelet (the lab);
 * without one, pods run in the host's network as plain processes.
 */
export interface PodNetwork {
  attach(pod: PodNetworkRequest): Promise<PodNetworkAttachment>;
  detach(pod: PodNetworkRequest): Promise<void>;
}
