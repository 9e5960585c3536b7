import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/**
 * A cluster provider cannot hand out the clusters a run asked for (quota exhausted, an install
 * failed, the source is unreachable). An infrastructure problem, never a test failure. The message
 * is the whole story for the operator (hub namespaces, Secret and object names); `reason`, when
 * given, is the short one a public repository's check run may show.
 */
export class ClustersUnavailableError extends NetstressError<"clusters-unavailable"> {
  override readonly name = "ClustersUnavailableError";
  readonly reason: string | undefined;

  constructor(message: string, options: { cause?: unknown; reason?: string } = {}) {
    super(message, { code: "clusters-unavailable", expected: true, cause: options.cause });
    this.reason = options.reason;
  }
}
