// Property: no sequence of comments, labels, pushes and button presses by untrusted users starts a
// run — on one real bot (webhooks over HTTP with real signatures, Redis, GitHub faked by nock).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkRunPayload,
  checkSuitePayload,
  commentPayload,
  pullRequestPayload,
} from "../helpers/github-payloads.ts";
import { startTestBot, TEST_APP_ID, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot;
beforeAll(async () => {
  // An opted-in repository: pushes and approvals would start runs if anything let them.
  t = await startTestBot({
    github: {
      members: ["alice"],
      config: "automatic: true\narches: [amd64, arm64]\n",
      pull: { author: "mallory" },
    },
  });
});
afterAll(async () => t.stop());

const USERS = ["mallory", "eve"];
const COMMANDS = [
  "/test network-stress",
  "/test network-stress arch=amd64,arm64 iterations=50",
  "/ok-to-test",
  "/retest",
  "/test network-stress more=10",
  "/test network-stress abort",
  "/test ?",
  "/test network-stress iterations=5\n/ok-to-test\n/test network-stress baseline=none",
];

type Event =
  | { kind: "comment"; user: string; body: string }
  | { kind: "label"; user: string }
  | { kind: "push"; user: string; sha: string }
  | { kind: "open"; user: string }
  | { kind: "button"; user: string; identifier: "more" | "rerun" | "abort" }
  | { kind: "suite"; user: string };

const user = fc.constantFrom(...USERS);
const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant("comment" as const), user, body: fc.constantFrom(...COMMANDS) }),
  fc.record({ kind: fc.constant("label" as const), user }),
  fc.record({
    kind: fc.constant("push" as const),
    user,
    sha: fc.constantFrom("a".repeat(40), "b".repeat(40)),
  }),
  fc.record({ kind: fc.constant("open" as const), user }),
  fc.record({
    kind: fc.constant("button" as const),
    user,
    identifier: fc.constantFrom("more" as const, "rerun" as const, "abort" as const),
  }),
  fc.record({ kind: fc.constant("suite" as const), user }),
);

let delivered = 0;
let pr = 100;

describe("untrusted users", () => {
  it("start no run, whatever they do and in whatever order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 6 }), async (events) => {
        pr += 1;
        for (const e of events) {
          const id = `property-${delivered++}`;
          const payload =
            e.kind === "comment"
              ? commentPayload({ body: e.body, author: e.user, pr })
              : e.kind === "label"
                ? pullRequestPayload({
                    action: "labeled",
                    author: "mallory",
                    sender: e.user,
                    label: "ok-to-test",
                    labels: ["ok-to-test"],
                    pr,
                  })
                : e.kind === "push"
                  ? pullRequestPayload({
                      action: "synchronize",
                      author: "mallory",
                      sender: e.user,
                      headSha: e.sha,
                      labels: ["ok-to-test"],
                      pr,
                    })
                  : e.kind === "open"
                    ? pullRequestPayload({ action: "opened", author: e.user, labels: ["ok-to-test"], pr })
                    : e.kind === "button"
                      ? checkRunPayload({
                          action: e.identifier === "rerun" ? "rerequested" : "requested_action",
                          runId: "f".repeat(32),
                          appId: TEST_APP_ID,
                          sender: e.user,
                          ...(e.identifier === "rerun" ? {} : { identifier: e.identifier }),
                        })
                      : checkSuitePayload({ appId: TEST_APP_ID, prs: [pr], sender: e.user });
          const name =
            e.kind === "comment"
              ? "issue_comment"
              : e.kind === "button"
                ? "check_run"
                : e.kind === "suite"
                  ? "check_suite"
                  : "pull_request";
          expect((await t.deliver(name, payload, id)).status).toBe(200);
        }
        await t.intakeHandled(delivered);
        expect(await t.store.listForPullRequest("openshift", "ovn-kubernetes", pr)).toEqual([]);
        expect(t.github.checkRunWrites()).toEqual([]);
      }),
      { numRuns: 25, seed: 20261201 },
    );
  }, 120_000);
});
