import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** A test binary could not be used at all (as opposed to a test inside it failing). */
export class OteError extends NetstressError<"unusable-binary"> {
  override readonly name = "OteError";
  readonly binary: string;

  constructor(message: string, options: { binary: string; cause?: unknown }) {
    super(message, { code: "unusable-binary", cause: options.cause });
    this.binary = options.binary;
  }
}
