import { NetstressError } from "../errors/netstress-error.ts";

/**
 * A cluster provider cannot hand out the clusters a run asked for (quota exhausted, an install
 * failed, the source is unreachable). An infrastructure problem, never a test failure; the message
 * is the reason for the reader.
 */
export class ClustersUnavailableError extends NetstressError<"clusters-unavailable"> {
  override readonly name = "ClustersUnavailableError";

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { code: "clusters-unavailable", expected: true, cause: options.cause });
  }
}
