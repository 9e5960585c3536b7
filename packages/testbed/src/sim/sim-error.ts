import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** A simulated cluster or Hive asked for with options that cannot work; the message says which and how to fix it. */
export class SimError extends NetstressError<"BadSimulationOptions"> {
  constructor(message: string) {
    super(message, { code: "BadSimulationOptions", expected: true });
  }
}
