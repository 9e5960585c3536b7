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
  /**
   * Runs a readiness check from the pod's node, as the kubelet does (an HTTP GET answered 2xx/3xx,
   * or a TCP connect); without it, a pod is Ready while its container runs.
   */
  probe?(check: PodProbe): Promise<boolean>;
}

/** One readiness check: `httpGet` or `tcpSocket` of a pod's container, against the pod's address. */
export interface PodProbe {
  nodeName: string;
  kind: "http" | "tcp";
  host: string;
  port: number;
  path?: string;
  timeoutMs: number;
}
