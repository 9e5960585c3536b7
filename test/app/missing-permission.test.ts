import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { metricValue } from "../helpers/metric-value.ts";
import { startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const SERIES = 'netstress_github_missing_permission_total{installation="4242",permission="checks=write"}';

describe("an installation without a permission the bot needs", () => {
  it("pauses its writes after GitHub's 403, counts it once, and says in the next reply what to grant", async () => {
    t = await startTestBot({ github: { members: ["alice"], missingPermission: "checks=write" } });
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    const metrics = () => fetch(`${t!.bot.internalUrl}/metrics`).then((r) => r.text());
    await eventually(async () => metricValue(await metrics(), SERIES) === 1);
    // The run's check run is retried in the background; while paused, nothing reaches GitHub.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(t.github.refusedWrites()).toBe(1);

    await t.deliver("issue_comment", commentPayload({ body: "/test ?" }));
    const [reply] = await eventually(() => t!.github.comments().length === 1 && t!.github.comments());
    expect(reply).toContain("the app needs `checks: write`. An owner of openshift grants it");
    await t.deliver("issue_comment", commentPayload({ body: "/test ?" }));
    const replies = await eventually(() => t!.github.comments().length === 2 && t!.github.comments());
    expect(replies[1]).not.toContain("cannot write here");
    expect(metricValue(await metrics(), SERIES)).toBe(1);
    expect(t.github.refusedWrites()).toBe(1);
  });
});
