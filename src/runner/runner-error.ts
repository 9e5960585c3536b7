import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** A run cannot start or continue. `usage` marks errors the user fixes by changing the command. */
export class RunnerError extends NetstressError<"usage" | "cannot-run"> {
  override readonly name = "RunnerError";
  readonly usage: boolean;

  constructor(message: string, options: { usage?: boolean; cause?: unknown } = {}) {
    super(message, { code: options.usage ? "usage" : "cannot-run", cause: options.cause });
    this.usage = options.usage ?? false;
  }
}
