// Item: run pages and metrics are not public. /runs (every installation's newest runs) and
// /metrics are served on the internal port only; a report link stays a capability URL that dies
// with its run; report files are served only from under the data directory, whatever Redis says.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/github-api.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

let t: TestBot;
const control = controlledExecutor();

beforeAll(async () => {
  t = await startTestBot({ github: { members: ["alice"] }, executor: control.executor });
});
afterAll(async () => t.stop());

describe("what the public port shows", () => {
  it("serves no index of runs and no metrics; the internal port does", async () => {
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress arch=amd64" }));
    const [runId] = await eventually(() => control.running.size === 1 && [...control.running.keys()]);
    for (const path of ["/runs", "/runs/", "/metrics"]) {
      const response = await fetch(`${t.bot.url}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).not.toContain(runId!);
    }
    const index = await fetch(`${t.bot.internalUrl}/runs`);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain(runId!);
    expect((await fetch(`${t.bot.internalUrl}/metrics`)).status).toBe(200);
    // The run's own page is its capability URL: served on the public port, to whoever has the link.
    expect((await fetch(`${t.bot.url}/runs/${runId}`)).status).toBe(200);
  });

  it("answers 404 once a run is gone, and never serves a file outside the data directory", async () => {
    const planted = runRecord({ reportPath: "/etc/passwd", state: "completed", conclusion: "success" });
    await t.store.create(planted);
    const page = await fetch(`${t.bot.url}/runs/${planted.id}`);
    expect(page.status).toBe(200);
    expect(await page.text()).not.toMatch(/root:.*:0:0:/);

    await t.redis.del(`${t.settings.queuePrefix}:store:run:${planted.id}`);
    expect((await fetch(`${t.bot.url}/runs/${planted.id}`)).status).toBe(404);
  });
});
