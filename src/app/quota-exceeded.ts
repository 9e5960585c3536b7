import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** A request that would take more than a PR, repository or installation may have; nothing started. */
export class QuotaExceeded extends NetstressError<"quota-exceeded"> {
  override readonly name = "QuotaExceeded";
  constructor(message: string) {
    super(message, { code: "quota-exceeded" });
  }
}
