import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** Why a run's execution stopped before it finished. */
export type RunStopKind = "aborted" | "timed out" | "shutdown";

/**
 * The reason of a run's signal once it aborted: a user or a newer run aborted it, it passed its
 * deadline, or this process is stopping (then the run resumes on another worker). The message is
 * what the executors tell (results, run.json): the abort's reason, "timed out", "the bot is stopping".
 */
export class RunStopped extends NetstressError<"run-stopped"> {
  override readonly name = "RunStopped";
  readonly kind: RunStopKind;

  constructor(kind: RunStopKind, message: string) {
    super(message, { code: "run-stopped" });
    this.kind = kind;
  }
}
