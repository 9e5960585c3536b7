// Item: unsigned requests cannot grow /metrics. Every made-up X-GitHub-Event used to become a
// label value of its own; label values now come from known sets only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot;
beforeAll(async () => {
  t = await startTestBot();
});
afterAll(async () => t.stop());

const series = (text: string, metric: string) =>
  text.split("\n").filter((line) => line.startsWith(`${metric}{`)).length;

describe("webhook metrics", () => {
  it("keep a bounded number of series however many made-up events arrive unsigned", async () => {
    const posts = 600;
    for (let i = 0; i < posts; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          fetch(`${t.bot.url}${t.settings.webhookPath}`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-github-event": `made-up-event-${i + j}`,
              "x-github-delivery": `delivery-${i + j}`,
            },
            body: "{}",
          }).then((response) => response.arrayBuffer()),
        ),
      );
    }
    const text = await (await fetch(`${t.bot.internalUrl}/metrics`)).text();
    expect(text).not.toContain("made-up-event");
    expect(series(text, "netstress_webhooks_received_total")).toBeLessThanOrEqual(3);
    expect(text).toMatch(/netstress_webhooks_received_total\{event="other",status="\d+"\} 600/);
  });
});
