import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

export type PayloadErrorCode =
  | "no-image-references"
  | "invalid-image-references"
  | "invalid-override"
  | "invalid-binary-registry"
  | "invalid-extension-imagestream"
  | "nothing-to-run"
  /** An override names a tag the base release does not have. */
  | "unknown-tag"
  /** A configured PR payload does not point the PR's tags at the PR's images. */
  | "pr-payload-mismatch"
  /** A PR payload can be neither used nor assembled as asked (no target repository, a layout base). */
  | "pr-payload-unusable"
  /** A payload's tag cannot be resolved to the digest it names (unknown, refused, unreachable). */
  | "unresolved-payload"
  /** A release selector names nothing the operator allows. */
  | "release-not-allowed";

/** A release payload (or what the user said about it) cannot be used to plan a run. */
export class PayloadError extends NetstressError<PayloadErrorCode> {
  override readonly name = "PayloadError";

  constructor(code: PayloadErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { code, cause: options.cause });
  }
}
