import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/**
 * The records break the one-payload-at-a-time rule, or the state given was made for another
 * target or design: nothing sound can be decided.
 */
export class DecideInputError extends NetstressError<"decide-input"> {
  override readonly name = "DecideInputError";
  constructor(message: string) {
    super(message, { code: "decide-input" });
  }
}
