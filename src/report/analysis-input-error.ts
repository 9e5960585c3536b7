import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** The inputs of an analysis cannot be read: a missing file, a directory without results, bad history. */
export class AnalysisInputError extends NetstressError<"unreadable-input"> {
  override readonly name = "AnalysisInputError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { code: "unreadable-input", cause: options.cause });
  }
}
