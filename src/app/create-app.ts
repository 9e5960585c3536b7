import type { ApplicationFunction } from "probot";
import type { CommandLimits } from "../commands/command.ts";
import { parseComment } from "../commands/parse-comment.ts";
import { ARCHES } from "../arch/arch.ts";
import { toIntakeEvent, type IntakeEvent } from "./intake-event.ts";

/** The events and actions the bot reacts to (app.yml subscribes to these events). */
export const HANDLED_EVENTS = [
  "issue_comment.created",
  "pull_request.opened",
  "pull_request.reopened",
  "pull_request.synchronize",
  "pull_request.ready_for_review",
  "pull_request.closed",
  "pull_request.labeled",
  "check_run.requested_action",
  "check_run.rerequested",
  "check_suite.rerequested",
] as const;

// Only to tell command comments from chatter; the intake re-parses with the repository's limits.
const ANY_LIMITS: CommandLimits = { arches: ARCHES, maxIterations: Infinity, maxMore: Infinity };
const isCommand = (body: string) => {
  const { commands, errors } = parseComment(body, ANY_LIMITS);
  return commands.length > 0 || errors.length > 0;
};

export interface WebhookIntake {
  /** Queues the event as a job whose id is the delivery id (a queued duplicate adds nothing). */
  enqueue(event: IntakeEvent): Promise<void>;
}

/**
 * The Probot app: each webhook that can matter is reduced to an intake event and queued, one Redis
 * round trip. Idempotency by delivery id, authorization, GitHub calls and runs happen in the intake
 * worker (processIntake), so a webhook is answered in about a millisecond.
 */
export function createNetstressApp(options: { appId: number; intake: WebhookIntake }): ApplicationFunction {
  const { appId, intake } = options;
  return (app) => {
    app.on([...HANDLED_EVENTS], async (context) => {
      const event = toIntakeEvent({
        name: context.name,
        deliveryId: context.id,
        payload: context.payload,
        appId,
        isCommand,
      });
      if (event) await intake.enqueue(event);
    });
  };
}
