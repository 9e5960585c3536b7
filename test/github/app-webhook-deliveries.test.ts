import nock from "nock";
import { afterEach, describe, expect, it } from "vitest";
import { appWebhookDeliveries } from "../../src/github/app-webhook-deliveries.ts";
import { fakeGitHub, type FakeGitHub } from "../helpers/github-api.ts";
import { githubAppKey } from "../helpers/github-app-key.ts";
import { webhookDeliveryLog } from "../helpers/github-deliveries.ts";
import { TestOctokit } from "../helpers/github-octokit.ts";
import { freePort } from "../helpers/free-port.ts";
import { pullRequestPayload } from "../helpers/github-payloads.ts";

const APP_ID = 4711;
let github: FakeGitHub | undefined;
afterEach(() => {
  github?.stop();
  nock.enableNetConnect();
});

async function setUp() {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  const log = webhookDeliveryLog({ secret: "s" });
  // Nobody listens there: every attempt fails to connect.
  const webhookUrl = `http://127.0.0.1:${await freePort()}/api/github/webhooks`;
  for (let pr = 1; pr <= 5; pr++)
    await log.deliver(webhookUrl, "pull_request", pullRequestPayload({ action: "opened", pr }));
  github = fakeGitHub({ deliveries: { log, webhookUrl, appId: APP_ID } });
  return log;
}

describe("the app webhook deliveries API", () => {
  it("follows the cursor through every page, as the app", async () => {
    const log = await setUp();
    const asApp = new TestOctokit({ auth: { appId: APP_ID, privateKey: githubAppKey() } });
    const listed = await appWebhookDeliveries(asApp, { pageSize: 2 }).listSince(0);
    expect(listed.map((d) => d.guid)).toEqual(log.attempts().map((a) => a.guid));
    expect(listed.every((d) => d.status_code === 0)).toBe(true);
  });

  it("leaves out deliveries older than the window", async () => {
    await setUp();
    const asApp = new TestOctokit({ auth: { appId: APP_ID, privateKey: githubAppKey() } });
    expect(await appWebhookDeliveries(asApp, { pageSize: 2 }).listSince(Date.now() + 60_000)).toEqual([]);
  });

  it("is refused with an installation token", async () => {
    await setUp();
    const asInstallation = new TestOctokit({ auth: "installation-token" });
    await expect(appWebhookDeliveries(asInstallation).listSince(0)).rejects.toMatchObject({ status: 401 });
  });
});
