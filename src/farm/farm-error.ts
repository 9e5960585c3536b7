import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

export type FarmErrorCode =
  /** The farm configuration file is missing or wrong. */
  | "invalid-config"
  /** No cluster can take the shard: none has its arch or capabilities, or all such are blocked. */
  | "no-eligible-cluster"
  /** The shard cannot be expressed as a Job (no image for a binary, a name that is not DNS-safe). */
  | "invalid-shard"
  /** A cluster's API refused or failed a request. */
  | "kube-api";

/** Something about the build farm stops a shard from being dispatched or collected. */
export class FarmError extends NetstressError<FarmErrorCode> {
  override readonly name = "FarmError";

  constructor(code: FarmErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { code, cause: options.cause });
  }
}
