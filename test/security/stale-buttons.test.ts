// Items: check-run Re-run and "Run 10 more" ignored whether the PR was still open and the commit
// still its head; "Re-run all checks" on a fork's PR did nothing (GitHub sends
// check_suite.pull_requests empty for fork heads).
import { afterEach, describe, expect, it } from "vitest";
import type { PrRun } from "../../src/runs/run-record.ts";
import { eventually } from "../helpers/github-api.ts";
import { checkRunPayload, checkSuitePayload, commentPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot, TEST_APP_ID, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});
const runsOfPr = () => t!.store.listForPullRequest("openshift", "ovn-kubernetes", 7);

async function finishedRun(control: ReturnType<typeof controlledExecutor>): Promise<PrRun> {
  t = await startTestBot({
    github: { members: ["alice"], config: "arches: [amd64]\n" },
    executor: control.executor,
  });
  await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=3" }), "start");
  const [runId] = await eventually(() => control.running.size === 1 && [...control.running.keys()]);
  await control.complete(runId!);
  return (await eventually(async () => {
    const run = await t!.store.get(runId!);
    return run?.state === "completed" && run;
  })) as PrRun;
}

describe("check run buttons", () => {
  it("start nothing once the PR moved on to another commit, or was closed", async () => {
    const run = await finishedRun(controlledExecutor());
    t!.github.pull.headSha = "c".repeat(40);
    for (const identifier of ["more", undefined]) {
      await t!.deliver(
        "check_run",
        checkRunPayload({
          action: identifier ? "requested_action" : "rerequested",
          runId: run.id,
          appId: TEST_APP_ID,
          ...(identifier ? { identifier } : {}),
        }),
        `button-${identifier ?? "rerun"}`,
      );
    }
    t!.github.pull.headSha = run.subject.headSha;
    t!.github.pull.state = "closed";
    await t!.deliver(
      "check_run",
      checkRunPayload({ action: "rerequested", runId: run.id, appId: TEST_APP_ID }),
      "closed",
    );
    await t!.intakeHandled(4);
    expect(await runsOfPr()).toHaveLength(1);
  });

  it("re-run a fork PR's runs from the bot's own index when the check suite names no PR", async () => {
    const control = controlledExecutor();
    await finishedRun(control);
    await t!.deliver("check_suite", checkSuitePayload({ appId: TEST_APP_ID, prs: [] }), "fork-suite");
    await eventually(async () => (await runsOfPr()).length === 2);
    expect((await runsOfPr())[0]!.subject.trigger.kind).toBe("rerun");
  });
});
