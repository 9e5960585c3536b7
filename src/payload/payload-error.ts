import { NetstressError } from "../errors/netstress-error.ts";

export type PayloadErrorCode =
  | "no-image-references"
  | "invalid-image-references"
  | "invalid-override"
  | "invalid-binary-registry"
  | "invalid-extension-imagestream"
  | "nothing-to-run";

/** A release payload (or what the user said about it) cannot be used to plan a run. */
export class PayloadError extends NetstressError<PayloadErrorCode> {
  override readonly name = "PayloadError";

  constructor(code: PayloadErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { code, cause: options.cause });
  }
}
