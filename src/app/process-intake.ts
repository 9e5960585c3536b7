import { handleCheckEvent } from "./handle-check-run.ts";
import { handleComment } from "./handle-comment.ts";
import { handleMergeGroup } from "./handle-merge-group.ts";
import { handlePullRequest } from "./handle-pull-request.ts";
import type { IntakeDeps } from "./intake-deps.ts";
import { intakeEventSchema, type IntakeEvent } from "./intake-event.ts";
import { QuotaExceeded } from "./quota-exceeded.ts";

/**
 * The intake worker's job: one webhook event, authorized and acted on, once per delivery id. The
 * queue drops a second copy while the first is queued; a redelivery after it was handled stops here.
 * A job that failed half-way is retried (runs it already made are found again by their ids).
 */
export async function processIntake(intake: IntakeDeps, data: unknown): Promise<void> {
  const event = intakeEventSchema.parse(data);
  if (await intake.store.isDeliveryHandled(event.deliveryId)) return;
  // Everything logged while handling a delivery names it.
  const deps = { ...intake, log: intake.log.child({ deliveryId: event.deliveryId }) };
  try {
    await handleEvent(deps, event);
  } catch (error) {
    // An automatic run or a button press past a quota: nothing to retry, nobody to reply to.
    if (!(error instanceof QuotaExceeded)) throw error;
    deps.log.warn({ reason: error.message }, "runs not started: quota exceeded");
  }
  await intake.store.markDeliveryHandled(event.deliveryId);
}

function handleEvent(deps: IntakeDeps, event: IntakeEvent): Promise<void> {
  switch (event.kind) {
    case "comment":
      return handleComment(deps, event);
    case "pull_request":
      return handlePullRequest(deps, event);
    case "check_run":
    case "check_suite":
      return handleCheckEvent(deps, event);
    case "merge_group":
      return handleMergeGroup(deps, event);
  }
}
