import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** Why the simulated API server refused a change, as the real one's Status reasons say. */
export type StoreErrorCode = "NotFound" | "AlreadyExists" | "Conflict" | "Expired" | "Invalid";

const HTTP_STATUS: Record<StoreErrorCode, number> = {
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Expired: 410,
  Invalid: 422,
};

/** A request the simulated API server answers with a failure Status (404, 409, 410, 422). */
export class StoreError extends NetstressError<StoreErrorCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
