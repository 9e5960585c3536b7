// Item: ok-to-test was a label anyone with triage (or issues: write) could add, it alone authorized,
// who added it was never checked, and it outlived the approver's membership. An approval is now
// recorded with the approver and the head they approved; a label added by someone untrusted is
// removed with a reply; a new push needs approving again; a synchronize by an untrusted pusher of
// someone else's branch starts nothing.
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload, HEAD_SHA, pullRequestPayload } from "../helpers/github-payloads.ts";
import { startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

const NEW_SHA = "b".repeat(40);
let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});
const runsOfPr = () => t!.store.listForPullRequest("openshift", "ovn-kubernetes", 7);
const automatic = "automatic: true\narches: [amd64]\n";

describe("approving an outside author's PR", () => {
  it("takes off an ok-to-test label an untrusted user added, and the label starts nothing", async () => {
    t = await startTestBot({
      github: { members: ["alice"], config: automatic, pull: { author: "newcomer" } },
    });
    await t.deliver(
      "pull_request",
      pullRequestPayload({
        action: "labeled",
        author: "newcomer",
        sender: "triager",
        label: "ok-to-test",
        labels: ["ok-to-test"],
      }),
    );
    await t.deliver(
      "pull_request",
      pullRequestPayload({
        action: "synchronize",
        author: "newcomer",
        headSha: NEW_SHA,
        labels: ["ok-to-test"],
      }),
    );
    await t.intakeHandled(2);
    expect(t.github.writes.some((w) => w.method === "DELETE" && w.path.endsWith("/labels/ok-to-test"))).toBe(
      true,
    );
    expect(t.github.comments().join("\n")).toContain(
      "approves nothing when added by someone who may not start runs",
    );
    expect(await runsOfPr()).toEqual([]);
  });

  it("covers the approved head only: a new push needs approving again", async () => {
    t = await startTestBot({
      github: { members: ["alice"], config: automatic, pull: { author: "newcomer" } },
    });
    await t.deliver("issue_comment", commentPayload({ body: "/ok-to-test", author: "alice" }), "approve");
    await eventually(async () => (await runsOfPr()).length === 1);
    await t.deliver(
      "pull_request",
      pullRequestPayload({ action: "synchronize", author: "newcomer", headSha: NEW_SHA }),
      "push",
    );
    await t.intakeHandled(2);
    const runs = await runsOfPr();
    expect(runs.map((r) => r.subject.headSha)).toEqual([HEAD_SHA]);
  });

  it("ignores a push to someone's branch by an untrusted pusher, even when the author's pushes are approved", async () => {
    t = await startTestBot({
      github: {
        members: ["alice"],
        config: `${automatic}approve_pushes: once\n`,
        pull: { author: "newcomer" },
      },
    });
    await t.deliver("issue_comment", commentPayload({ body: "/ok-to-test", author: "alice" }), "approve");
    await eventually(async () => (await runsOfPr()).length === 1);
    const push = (sender: string, headSha: string, id: string) =>
      t!.deliver(
        "pull_request",
        pullRequestPayload({ action: "synchronize", author: "newcomer", sender, headSha }),
        id,
      );
    await push("mallory", NEW_SHA, "mallory-push");
    await t.intakeHandled(2);
    expect((await runsOfPr()).map((r) => r.subject.headSha)).not.toContain(NEW_SHA);
    // The author's own push runs: approve_pushes: once covers it.
    await push("newcomer", NEW_SHA, "author-push");
    await eventually(async () => (await runsOfPr()).some((r) => r.subject.headSha === NEW_SHA));
  });
});
