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

/** A member's run that is executing (controlled by the test). */
async function startRun(
  control: ReturnType<typeof controlledExecutor>,
  body = "/test network-stress iterations=3",
) {
  t = await startTestBot({
    github: { members: ["alice"], config: "arches: [amd64]\n" },
    executor: control.executor,
  });
  await t.deliver("issue_comment", commentPayload({ body }));
  const [run] = await eventually(async () => {
    const runs = await runsOfPr();
    return runs[0] && control.running.has(runs[0].id) && runs;
  });
  return run!;
}

async function finishRun(control: ReturnType<typeof controlledExecutor>, run: PrRun) {
  await control.complete(run.id);
  return eventually(async () => {
    const done = await t!.store.get(run.id);
    return done?.state === "completed" && (done as PrRun);
  });
}

describe("check run buttons and re-runs", () => {
  it("shows Abort while running, and Abort cancels naming who pressed it", async () => {
    const control = controlledExecutor();
    const run = await startRun(control);
    const running = await eventually(() => t!.github.latestCheckRuns().get(run.subject.checkRunId!));
    expect(running.actions).toEqual([
      { label: "Abort", description: "Stop this run now", identifier: "abort" },
    ]);

    await t!.deliver(
      "check_run",
      checkRunPayload({ action: "requested_action", runId: run.id, appId: TEST_APP_ID, identifier: "abort" }),
    );
    const done = await eventually(async () => {
      const r = await t!.store.get(run.id);
      return r?.state === "completed" && r;
    });
    expect(done).toMatchObject({ conclusion: "cancelled", reason: "aborted by @alice" });
    await eventually(() => !control.running.has(run.id));
    const check = await eventually(() => {
      const c = t!.github.latestCheckRuns().get(run.subject.checkRunId!);
      return c?.status === "completed" && c;
    });
    expect(check.actions).toEqual([
      { label: "Re-run", description: "Run again with the same options", identifier: "rerun" },
    ]);
  });

  it("runs 10 more iterations on the finished results with the button", async () => {
    const control = controlledExecutor();
    const run = await finishRun(control, await startRun(control));
    const check = await eventually(() => {
      const c = t!.github.latestCheckRuns().get(run.subject.checkRunId!);
      return c?.status === "completed" && c;
    });
    expect((check.actions as { identifier: string }[]).map((a) => a.identifier)).toEqual(["rerun", "more"]);

    await t!.deliver(
      "check_run",
      checkRunPayload({ action: "requested_action", runId: run.id, appId: TEST_APP_ID, identifier: "more" }),
    );
    const more = await eventually(async () =>
      (await runsOfPr()).find((r) => r.subject.parentRunId === run.id),
    );
    expect(more).toMatchObject({
      firstIteration: 3,
      options: { iterations: 10 },
      subject: { trigger: { kind: "more" } },
    });
    expect(more.results).toEqual(run.results);
  });

  it("reruns with the same options on Re-run, rerequested and Re-run all checks", async () => {
    const control = controlledExecutor();
    const run = await finishRun(
      control,
      await startRun(control, "/test network-stress iterations=4 focus=EgressIP"),
    );
    for (const payload of [
      checkRunPayload({ action: "requested_action", runId: run.id, appId: TEST_APP_ID, identifier: "rerun" }),
      checkRunPayload({ action: "rerequested", runId: run.id, appId: TEST_APP_ID }),
      checkSuitePayload({ appId: TEST_APP_ID, prs: [7] }),
    ]) {
      const before = (await runsOfPr()).length;
      await t!.deliver("check_run" in payload ? "check_run" : "check_suite", payload);
      const latest = await eventually(async () => {
        const runs = await runsOfPr();
        return runs.length === before + 1 && runs[0]!;
      });
      expect(latest).toMatchObject({
        options: { iterations: 4, focus: "EgressIP" },
        subject: { trigger: { kind: "rerun" } },
      });
      await finishRun(control, await eventually(async () => control.running.has(latest.id) && latest));
    }
  });

  it("ignores other apps' check runs and buttons pressed by people without access", async () => {
    const control = controlledExecutor();
    const run = await startRun(control);
    await t!.deliver(
      "check_run",
      checkRunPayload({ action: "requested_action", runId: run.id, appId: 1, identifier: "abort" }),
    );
    await t!.deliver(
      "check_run",
      checkRunPayload({
        action: "requested_action",
        runId: run.id,
        appId: TEST_APP_ID,
        identifier: "abort",
        sender: "mallory",
      }),
    );
    await t!.intakeHandled(2);
    expect((await t!.store.get(run.id))!.state).toBe("running");
  });
});
