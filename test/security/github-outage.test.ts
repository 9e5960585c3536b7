// Item: a GitHub outage at the end of a run left its check run in_progress forever. Publishing is
// now state of its own: the run concludes regardless, the update is retried until GitHub takes it,
// and start-up republishes every run still unpublished.
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";
import type { PrRun } from "../../src/runs/run-record.ts";

let bots: TestBot[] = [];
afterEach(async () => {
  for (const bot of bots) await bot.stop().catch(() => {});
  bots = [];
});

async function runDuringOutage(control: ReturnType<typeof controlledExecutor>, queuePrefix?: string) {
  const t = await startTestBot({
    github: { members: ["alice"], config: "arches: [amd64]\n" },
    executor: control.executor,
    ...(queuePrefix ? { settings: { queuePrefix } } : {}),
  });
  bots.push(t);
  await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=3" }));
  const [runId] = await eventually(() => control.running.size === 1 && [...control.running.keys()]);
  const run = (await eventually(async () => {
    const stored = await t.store.get(runId!);
    return stored?.state === "running" && (stored as PrRun).subject.checkRunId !== undefined && stored;
  })) as PrRun;
  t.github.setOutage(true);
  await control.complete(run.id);
  await eventually(async () => (await t.store.get(run.id))?.state === "completed");
  expect(await t.store.listUnpublished()).toContain(run.id);
  const checkRun = () => t.github.latestCheckRuns().get(run.subject.checkRunId!);
  expect(checkRun()?.status).not.toBe("completed");
  return { t, run, checkRun };
}

describe("a GitHub outage at the end of a run", () => {
  it("still ends its check run once GitHub answers again", async () => {
    const { t, run, checkRun } = await runDuringOutage(controlledExecutor());
    t.github.setOutage(false);
    await eventually(() => checkRun()?.status === "completed", 40_000);
    expect(checkRun()).toMatchObject({ status: "completed", conclusion: "success" });
    await eventually(async () => !(await t.store.listUnpublished()).includes(run.id));
  }, 60_000);

  it("is made good by the next bot's start-up when the bot stopped first", async () => {
    const { t, run } = await runDuringOutage(controlledExecutor());
    const prefix = t.settings.queuePrefix;
    await t.stop();
    bots = [];
    const next = await startTestBot({
      github: { members: ["alice"], config: "arches: [amd64]\n" },
      settings: { queuePrefix: prefix },
    });
    bots.push(next);
    await eventually(
      () => next.github.latestCheckRuns().get(run.subject.checkRunId!)?.status === "completed",
      40_000,
    );
    expect(next.github.latestCheckRuns().get(run.subject.checkRunId!)).toMatchObject({
      conclusion: "success",
    });
  }, 60_000);
});
