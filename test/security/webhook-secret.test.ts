// Item: with NODE_ENV=development the webhook secret fell back to a known value ("development"),
// so anyone could sign webhooks. `netstress serve` now refuses to start without a real one.
import { describe, expect, it } from "vitest";
import { githubAppKey } from "../helpers/github-app-key.ts";
import { runNetstress } from "../helpers/run-netstress.ts";

describe("netstress serve without WEBHOOK_SECRET", () => {
  it("refuses to start, in development too, and says what to set", async () => {
    const result = await runNetstress(["serve"], {
      env: { PATH: process.env.PATH, NODE_ENV: "development", APP_ID: "1", PRIVATE_KEY: githubAppKey() },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("WEBHOOK_SECRET is required");
    expect(result.stderr).not.toContain("listening");
  });
});
