import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/**
 * The network extension could not do what it was asked: bad arguments, an unreachable cluster
 * under test, probe pods that never ran. A test reports it as its failure; the command line prints it.
 */
export class ExtError extends NetstressError<"ext-usage" | "ext-cluster" | "ext-probes"> {
  override readonly name = "ExtError";
  constructor(
    message: string,
    options: { code: "ext-usage" | "ext-cluster" | "ext-probes"; cause?: unknown },
  ) {
    super(message, options);
  }
}
