import { NetstressError } from "../errors/netstress-error.ts";

export type KubeErrorCode =
  /** A kubeconfig that cannot be used: it names no server. */
  | "invalid-kubeconfig"
  /** A cluster's API refused or failed a request. */
  | "kube-api";

/** Talking to a Kubernetes API failed, whichever cluster it is: a build farm or a cluster under test. */
export class KubeError extends NetstressError<KubeErrorCode> {
  override readonly name: string = "KubeError";

  constructor(code: KubeErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { code, cause: options.cause });
  }
}
