import { z } from "zod";
import { OK_TO_TEST_LABEL } from "../trust/authorize-actor.ts";

const actorSchema = z.object({ login: z.string(), type: z.string() });
export type IntakeActor = z.infer<typeof actorSchema>;

const baseSchema = z.object({
  deliveryId: z.string(),
  installationId: z.number().int(),
  owner: actorSchema,
  repo: z.string(),
  /** The webhook's repository.private: only a private repository's check runs show infrastructure detail. */
  privateRepository: z.boolean().default(false),
  sender: actorSchema,
});

/**
 * A webhook event reduced to what the intake needs: the job data of the intake queue. Parsed from
 * the payload in the webhook handler and again when a worker reads it back from Redis.
 */
export const intakeEventSchema = z.discriminatedUnion("kind", [
  baseSchema.extend({ kind: z.literal("comment"), pr: z.number().int(), body: z.string() }),
  baseSchema.extend({
    kind: z.literal("pull_request"),
    action: z.enum(["opened", "reopened", "synchronize", "ready_for_review", "closed", "labeled"]),
    pr: z.number().int(),
    headSha: z.string(),
    author: actorSchema,
    labels: z.array(z.string()),
    draft: z.boolean(),
    /** The label a `labeled` event added. */
    label: z.string().optional(),
  }),
  baseSchema.extend({
    kind: z.literal("check_run"),
    action: z.enum(["requested_action", "rerequested"]),
    runId: z.string(),
    identifier: z.string().optional(),
  }),
  baseSchema.extend({ kind: z.literal("check_suite"), headSha: z.string(), prs: z.array(z.number().int()) }),
  baseSchema.extend({
    kind: z.literal("merge_group"),
    /** The merge group's commit, which the required checks are awaited on. */
    headSha: z.string(),
    /** `refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>`: names the PR at the group's tip. */
    headRef: z.string(),
    baseRef: z.string(),
  }),
]);
export type IntakeEvent = z.infer<typeof intakeEventSchema>;

// Without `private` a repository counts as public: its check runs show the least.
const repositorySchema = z.object({
  name: z.string(),
  owner: actorSchema,
  private: z.boolean().default(false),
});
const commonSchema = z.object({
  installation: z.object({ id: z.number().int() }),
  repository: repositorySchema,
  sender: actorSchema,
});
const appSchema = z.object({ id: z.number() }).nullish();

const commentPayload = commonSchema.extend({
  action: z.literal("created"),
  issue: z.object({ number: z.number().int(), pull_request: z.unknown().optional() }),
  comment: z.object({ body: z.string().nullish(), performed_via_github_app: appSchema }),
});
const pullRequestPayload = commonSchema.extend({
  action: z.enum(["opened", "reopened", "synchronize", "ready_for_review", "closed", "labeled"]),
  label: z.object({ name: z.string() }).optional(),
  number: z.number().int(),
  pull_request: z.object({
    head: z.object({ sha: z.string() }),
    user: actorSchema,
    labels: z.array(z.object({ name: z.string() })).default([]),
    draft: z.boolean().default(false),
  }),
});
const checkRunPayload = commonSchema.extend({
  action: z.enum(["requested_action", "rerequested"]),
  check_run: z.object({ external_id: z.string().nullish(), app: appSchema }),
  requested_action: z.object({ identifier: z.string() }).nullish(),
});
const checkSuitePayload = commonSchema.extend({
  action: z.literal("rerequested"),
  check_suite: z.object({
    head_sha: z.string(),
    app: appSchema,
    pull_requests: z.array(z.object({ number: z.number().int() })).default([]),
  }),
});

const mergeGroupPayload = commonSchema.extend({
  action: z.literal("checks_requested"),
  merge_group: z.object({ head_sha: z.string(), head_ref: z.string(), base_ref: z.string() }),
});

/**
 * Decides in microseconds whether a delivery can matter and reduces it to an IntakeEvent.
 * Undefined: nothing to do (a comment on an issue, the bot's own comment, another app's check run,
 * an action the bot does not handle, a payload without the fields it needs).
 */
export function toIntakeEvent(options: {
  name: string;
  deliveryId: string;
  payload: unknown;
  appId: number;
  isCommand: (body: string) => boolean;
}): IntakeEvent | undefined {
  const { name, deliveryId, payload, appId } = options;
  const base = (p: z.infer<typeof commonSchema>) => ({
    deliveryId,
    installationId: p.installation.id,
    owner: p.repository.owner,
    repo: p.repository.name,
    privateRepository: p.repository.private,
    sender: p.sender,
  });
  switch (name) {
    case "issue_comment": {
      const p = commentPayload.safeParse(payload);
      if (!p.success || p.data.issue.pull_request == null) return undefined;
      const body = p.data.comment.body ?? "";
      if (p.data.comment.performed_via_github_app?.id === appId || !options.isCommand(body)) return undefined;
      return { kind: "comment", ...base(p.data), pr: p.data.issue.number, body };
    }
    case "pull_request": {
      const p = pullRequestPayload.safeParse(payload);
      if (!p.success) return undefined;
      // Of labels, only the approval label matters (and only to check who added it).
      if (p.data.action === "labeled" && p.data.label?.name !== OK_TO_TEST_LABEL) return undefined;
      const pr = p.data.pull_request;
      return {
        kind: "pull_request",
        ...base(p.data),
        action: p.data.action,
        pr: p.data.number,
        headSha: pr.head.sha,
        author: pr.user,
        labels: pr.labels.map((l) => l.name),
        draft: pr.draft,
        ...(p.data.label ? { label: p.data.label.name } : {}),
      };
    }
    case "check_run": {
      const p = checkRunPayload.safeParse(payload);
      if (!p.success || p.data.check_run.app?.id !== appId || !p.data.check_run.external_id) return undefined;
      return {
        kind: "check_run",
        ...base(p.data),
        action: p.data.action,
        runId: p.data.check_run.external_id,
        ...(p.data.requested_action ? { identifier: p.data.requested_action.identifier } : {}),
      };
    }
    case "check_suite": {
      const p = checkSuitePayload.safeParse(payload);
      if (!p.success || p.data.check_suite.app?.id !== appId) return undefined;
      const suite = p.data.check_suite;
      return {
        kind: "check_suite",
        ...base(p.data),
        headSha: suite.head_sha,
        prs: suite.pull_requests.map((pr) => pr.number),
      };
    }
    case "merge_group": {
      const p = mergeGroupPayload.safeParse(payload);
      if (!p.success) return undefined;
      const group = p.data.merge_group;
      return {
        kind: "merge_group",
        ...base(p.data),
        headSha: group.head_sha,
        headRef: group.head_ref,
        baseRef: group.base_ref,
      };
    }
    default:
      return undefined;
  }
}
