import type { ApplicationFunction } from "probot";
import type { CommandLimits } from "../commands/command.ts";
import { parseComment } from "../commands/parse-comment.ts";
import { ARCHES } from "@netstress/core/arch/arch.ts";
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
  "merge_group.checks_requested",
] as const;

// Only to tell command comments from chatter; the intake re-parses with the repository's limits.
const ANY_LIMITS: CommandLimits = {
  arches: ARCHES,
  maxIterations: Infinity,
  maxMore: Infinity,
  releases: { repositories: [], streams: [] },
};
const isCommand = (body: string) => {
  const { commands, errors } = parseComment(body, ANY_LIMITS);
  return commands.length > 0 || errors.length > 0;
};

export interface WebhookIntake {
  /** Queues the event as a job whose id is the delivery id (a queued duplicate adds nothing). */
  enqueue(event: IntakeEvent): Promise<void>;
  /** Remembers a delivery that needs nothing done, so that it is never asked for again. */
  ignore(deliveryId: string): Promise<void>;
}

const HANDLED = new Set<string>(HANDLED_EVENTS);

/**
 * The Probot app: each webhook that can matter is reduced to an intake event and queued, one Redis
 * round trip. Idempotency by delivery id, authorization, GitHub calls and runs happen in the intake
 * worker (processIntake), so a webhook is answered in about a millisecond.
 */
export function createNetstressApp(options: { appId: number; intake: WebhookIntake }): ApplicationFunction {
  const { appId, intake } = options;
  return (app) => {
    // Every delivery, so that each one is either queued or known to need nothing (the missed
    // delivery recovery asks GitHub again for any delivery id it does not know).
    app.onAny(async (context) => {
      const action = (context.payload as { action?: unknown }).action;
      const event = HANDLED.has(typeof action === "string" ? `${context.name}.${action}` : context.name)
        ? toIntakeEvent({
            name: context.name,
            deliveryId: context.id,
            payload: context.payload,
            appId,
            isCommand,
          })
        : undefined;
      await (event ? intake.enqueue(event) : intake.ignore(context.id));
    });
  };
}
