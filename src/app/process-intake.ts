import { handleCheckEvent } from "./handle-check-run.ts";
import { handleComment } from "./handle-comment.ts";
import { handlePullRequest } from "./handle-pull-request.ts";
import type { IntakeDeps } from "./intake-deps.ts";
import { intakeEventSchema } from "./intake-event.ts";

/** The intake worker's job: one webhook event, authorized and acted on. */
export async function processIntake(intake: IntakeDeps, data: unknown): Promise<void> {
  const event = intakeEventSchema.parse(data);
  // Everything logged while handling a delivery names it.
  const deps = { ...intake, log: intake.log.child({ deliveryId: event.deliveryId }) };
  switch (event.kind) {
    case "comment":
      return handleComment(deps, event);
    case "pull_request":
      return handlePullRequest(deps, event);
    case "check_run":
    case "check_suite":
      return handleCheckEvent(deps, event);
  }
}
