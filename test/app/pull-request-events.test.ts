import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload, HEAD_SHA, pullRequestPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const runsOfPr = () => t!.store.listForPullRequest("openshift", "ovn-kubernetes", 7);
const OPTED_IN = "arches: [amd64, arm64]\niterations: 12\n";
const NEW_SHA = "b".repeat(40);

describe("automatic runs on pull request events", () => {
  it("runs the configured arches and options when a member opens a PR", async () => {
    t = await startTestBot({ github: { members: ["alice"], config: OPTED_IN } });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened" }));
    const runs = await eventually(async () => {
      const r = await runsOfPr();
      return r.length === 2 && r;
    });
    expect(
      runs.map((r) => [r.arch, r.options.iterations, r.subject.headSha, r.subject.trigger.kind]).sort(),
    ).toEqual([
      ["amd64", 12, HEAD_SHA, "pull_request"],
      ["arm64", 12, HEAD_SHA, "pull_request"],
    ]);
  });

  it("ends the old head's runs as superseded on a push and starts the new head's", async () => {
    const control = controlledExecutor();
    t = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64]\n" },
      executor: control.executor,
    });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened" }));
    const [old] = await eventually(async () => {
      const r = await runsOfPr();
      return r[0] && control.running.has(r[0].id) && r;
    });
    await t.deliver("pull_request", pullRequestPayload({ action: "synchronize", headSha: NEW_SHA }));
    const cancelled = await eventually(async () => {
      const run = await t!.store.get(old!.id);
      return run?.state === "completed" && run;
    });
    expect(cancelled).toMatchObject({ conclusion: "cancelled", reason: `superseded by ${NEW_SHA}` });
    const check = await eventually(() =>
      [...t!.github.latestCheckRuns().values()].find((c) => c.conclusion === "cancelled"),
    );
    expect(check).toMatchObject({
      head_sha: HEAD_SHA,
      status: "completed",
      output: { title: `Cancelled — superseded by ${NEW_SHA}` },
    });
    await eventually(async () =>
      (await runsOfPr()).some((r) => r.subject.headSha === NEW_SHA && control.running.has(r.id)),
    );
    expect(control.running.has(old!.id)).toBe(false);
  });

  it("aborts every active run when the PR is closed", async () => {
    const control = controlledExecutor();
    t = await startTestBot({ github: { members: ["alice"], config: OPTED_IN }, executor: control.executor });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened" }));
    await eventually(() => control.running.size === 2);
    await t.deliver("pull_request", pullRequestPayload({ action: "closed" }));
    const runs = await eventually(async () => {
      const r = await runsOfPr();
      return r.every((run) => run.state === "completed") && r;
    });
    expect(runs.map((r) => r.reason)).toEqual(["the pull request was closed", "the pull request was closed"]);
    await eventually(() => control.running.size === 0);
  });

  it("leaves drafts alone until they are ready for review", async () => {
    t = await startTestBot({ github: { members: ["alice"], config: "arches: [amd64]\n" } });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened", draft: true }));
    await t.intakeHandled(1);
    expect(await runsOfPr()).toEqual([]);
    await t.deliver("pull_request", pullRequestPayload({ action: "ready_for_review" }));
    await eventually(async () => (await runsOfPr()).length === 1);
  });

  it("runs drafts too with drafts: true", async () => {
    t = await startTestBot({ github: { members: ["alice"], config: "arches: [amd64]\ndrafts: true\n" } });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened", draft: true }));
    await eventually(async () => (await runsOfPr()).length === 1);
  });

  it("runs only when a changed file matches run_if_changed", async () => {
    t = await startTestBot({
      github: {
        members: ["alice"],
        config: "arches: [amd64]\nrun_if_changed: ^go-controller/\n",
        files: ["docs/README.md"],
      },
    });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened" }));
    await t.intakeHandled(1);
    expect(await runsOfPr()).toEqual([]);
    await t.stop();

    t = await startTestBot({
      github: {
        members: ["alice"],
        config: "arches: [amd64]\nrun_if_changed: ^go-controller/\n",
        files: ["docs/README.md", "go-controller/pkg/node/gateway.go"],
      },
    });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened" }));
    await eventually(async () => (await runsOfPr()).length === 1);
  });

  it("tells an outside author once how runs get approved, and runs after ok-to-test", async () => {
    t = await startTestBot({ github: { members: ["alice"], config: "arches: [amd64]\n" } });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened", author: "newcomer" }));
    await t.deliver(
      "pull_request",
      pullRequestPayload({ action: "synchronize", author: "newcomer", headSha: NEW_SHA }),
    );
    const [reply] = await eventually(() => t!.github.comments().length === 1 && t!.github.comments());
    expect(reply).toContain("Thanks, @newcomer!");
    expect(reply).toContain("commenting `/ok-to-test`");
    await t.intakeHandled(2);
    expect(await runsOfPr()).toEqual([]);
    expect(t.github.comments()).toHaveLength(1);

    // A member approves the head with /ok-to-test (the label alone approves nothing).
    t.github.pull.author = "newcomer";
    t.github.pull.headSha = NEW_SHA;
    await t.deliver("issue_comment", commentPayload({ body: "/ok-to-test", author: "alice" }));
    await eventually(async () => (await runsOfPr()).length === 1);
  });

  it("reports an unusable configuration on the commit instead of swallowing it", async () => {
    t = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64, sparc]\niteratons: 5\npayload: oci:/etc\n" },
    });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened" }));
    const check = await eventually(() => t!.github.checkRunWrites()[0]);
    expect(check.body).toMatchObject({
      name: "network-stress",
      head_sha: HEAD_SHA,
      status: "completed",
      conclusion: "action_required",
      details_url: "http://bot.test/schemas/network-stress.schema.json",
      output: { title: ".github/network-stress.yml cannot be used" },
    });
    const summary = (check.body.output as { summary: string }).summary;
    expect(summary).toContain("- arches.1: ");
    expect(summary).toContain('Unrecognized key: "iteratons"');
    expect(await runsOfPr()).toEqual([]);
  });

  it("refuses local OCI layouts in repository configuration", async () => {
    t = await startTestBot({
      github: { members: ["alice"], config: "payload: oci:/var/lib/secret-layout:release\n" },
    });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened" }));
    const check = await eventually(() => t!.github.checkRunWrites()[0]);
    expect((check.body.output as { summary: string }).summary).toContain(
      "payload: local OCI layouts (oci:…) may be set by the bot's operator only",
    );
  });

  it("does nothing automatic for a repository without the configuration file", async () => {
    t = await startTestBot({ github: { members: ["alice"] } });
    await t.deliver("pull_request", pullRequestPayload({ action: "opened" }));
    await t.intakeHandled(1);
    expect(t.github.writes).toEqual([]);
  });
});
