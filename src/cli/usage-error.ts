import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** The command line is wrong: exit status 2 with a one-line reason that says how to fix it. */
export class UsageError extends NetstressError<"usage"> {
  override readonly name = "UsageError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { code: "usage", cause: options.cause });
  }
}
