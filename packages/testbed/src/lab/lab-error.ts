import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

export type LabErrorCode =
  /** Not root, or no network namespaces on this machine. */
  | "LabUnavailable"
  /** Options that cannot work (a bad name, too many nodes). */
  | "BadLabOptions"
  /** A lab of that name runs already. */
  | "LabRunning"
  /** An `ip` command (or a lab process) failed. */
  | "LabCommandFailed"
  /** The lab did not come up in time. */
  | "LabNotReady";

/** Something about the lab went wrong; the message says what and how to fix it. */
export class LabError extends NetstressError<LabErrorCode> {
  override readonly name = "LabError";
  constructor(message: string, options: { code: LabErrorCode; cause?: unknown; expected?: boolean }) {
    super(message, options);
  }
}
