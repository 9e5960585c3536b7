import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { webhookDeliveryLog } from "../helpers/github-deliveries.ts";
import { commentPayload, HEAD_SHA, pullRequestPayload } from "../helpers/github-payloads.ts";
import { freePort } from "../helpers/free-port.ts";
import { metricValue } from "../helpers/metric-value.ts";
import { controlledExecutor, startTestBot, TEST_SECRET, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const NEW_SHA = "b".repeat(40);
const runsOf = (pr: number) => t!.store.listForPullRequest("openshift", "ovn-kubernetes", pr);

describe("missed webhook deliveries", () => {
  it("acts on the deliveries GitHub failed to make while the bot was down, once each, after it starts", async () => {
    const deliveries = webhookDeliveryLog({ secret: TEST_SECRET });
    const settings = { port: await freePort(), queuePrefix: `recovery-${randomUUID()}` };
    const webhookUrl = `http://127.0.0.1:${settings.port}/api/github/webhooks`;
    const start = (executor = controlledExecutor(["amd64"])) =>
      startTestBot({
        github: { members: ["alice"], config: "arches: [amd64]\n" },
        settings,
        executor: executor.executor,
        deliveries,
        deliveryRecovery: { intervalMs: 300, settleMs: 5_000 },
      }).then((bot) => ({ bot, executor }));

    // Two PRs with a run each while the bot is up.
    let up = await start();
    t = up.bot;
    for (const pr of [8, 9]) {
      const opened = await deliveries.deliver(
        webhookUrl,
        "pull_request",
        pullRequestPayload({ action: "opened", pr }),
      );
      expect(opened.status_code).toBe(200);
    }
    const [pushedRun] = await eventually(async () => {
      const runs = await runsOf(8);
      return runs.length === 1 && up.executor.running.has(runs[0]!.id) && runs;
    });
    const [closedRun] = await eventually(async () => {
      const runs = await runsOf(9);
      return runs.length === 1 && up.executor.running.has(runs[0]!.id) && runs;
    });

    // Down for an upgrade: a /test, a push and a close find nobody listening.
    await t.stop();
    t = undefined;
    const missed = [
      await deliveries.deliver(
        webhookUrl,
        "issue_comment",
        commentPayload({ body: "/test network-stress", pr: 7 }),
      ),
      await deliveries.deliver(
        webhookUrl,
        "pull_request",
        pullRequestPayload({ action: "synchronize", pr: 8, headSha: NEW_SHA }),
      ),
      await deliveries.deliver(webhookUrl, "pull_request", pullRequestPayload({ action: "closed", pr: 9 })),
    ];
    expect(missed.map((d) => [d.status, d.status_code])).toEqual([
      ["failed to connect", 0],
      ["failed to connect", 0],
      ["failed to connect", 0],
    ]);

    up = await start();
    t = up.bot;
    const [tested] = await eventually(async () => {
      const runs = await runsOf(7);
      return runs.length === 1 && up.executor.running.has(runs[0]!.id) && runs;
    });
    expect(tested).toMatchObject({
      subject: { headSha: HEAD_SHA, trigger: { kind: "comment", actor: "alice" } },
    });
    await eventually(async () => (await t!.store.get(pushedRun!.id))?.state === "completed");
    expect(await t.store.get(pushedRun!.id)).toMatchObject({
      conclusion: "cancelled",
      reason: `superseded by ${NEW_SHA}`,
    });
    const newHead = await eventually(async () => {
      const runs = (await runsOf(8)).filter((r) => r.subject.headSha === NEW_SHA);
      return runs.length === 1 && up.executor.running.has(runs[0]!.id) && runs[0];
    });
    expect(newHead.state).toBe("running");
    await eventually(async () => (await t!.store.get(closedRun!.id))?.state === "completed");
    expect(await t.store.get(closedRun!.id)).toMatchObject({
      conclusion: "cancelled",
      reason: "the pull request was closed",
    });

    // Several sweeps later, nothing was asked for twice and no run was started twice. (A sweep
    // reads one page of deliveries here: four more reads are three whole sweeps.)
    const listed = t.github.deliveryListings();
    await eventually(() => t!.github.deliveryListings() >= listed + 4);
    const redeliveries = deliveries.attempts().filter((a) => a.redelivery);
    expect(redeliveries.map((a) => [a.guid, a.status_code]).sort()).toEqual(
      missed.map((d) => [d.guid, 200]).sort(),
    );
    expect([(await runsOf(7)).length, (await runsOf(8)).length, (await runsOf(9)).length]).toEqual([1, 2, 1]);
    const metrics = await (await fetch(`${t.bot.internalUrl}/metrics`)).text();
    expect(metricValue(metrics, 'netstress_webhook_deliveries_recovered_total{event="issue_comment"}')).toBe(
      1,
    );
    expect(metricValue(metrics, 'netstress_webhook_deliveries_recovered_total{event="pull_request"}')).toBe(
      2,
    );
  });
});
