import { describe, expect, it } from "vitest";
import { loadBotSettings, SettingsError } from "../../src/config/bot-settings.ts";

const base = {
  APP_ID: "123",
  PRIVATE_KEY: "-----BEGIN KEY-----\\nabc\\n-----END KEY-----",
  WEBHOOK_SECRET: "s",
};

describe("loadBotSettings", () => {
  it("reads Probot's standard settings and the bot's own", () => {
    const settings = loadBotSettings({
      ...base,
      PORT: "8080",
      LOG_LEVEL: "debug",
      NETSTRESS_REDIS_URL: "redis://10.0.0.1:6380",
      NETSTRESS_REDIS_PASSWORD: "from-a-secret",
      NETSTRESS_TRUSTED_APPS: "renovate[bot], ci-robot[bot]",
      NETSTRESS_PUBLIC_URL: "https://stress.example.com/",
    });
    expect(settings).toMatchObject({
      appId: 123,
      privateKey: "-----BEGIN KEY-----\nabc\n-----END KEY-----",
      webhookSecret: "s",
      port: 8080,
      logLevel: "debug",
      githubBaseUrl: "https://api.github.com",
      redisUrl: "redis://:from-a-secret@10.0.0.1:6380",
      trustedApps: ["renovate[bot]", "ci-robot[bot]"],
      publicUrl: "https://stress.example.com",
    });
  });

  it("requires WEBHOOK_SECRET, in development too (a known fallback would verify nothing)", () => {
    const { WEBHOOK_SECRET: _, ...rest } = base;
    expect(() => loadBotSettings(rest)).toThrow(/WEBHOOK_SECRET is required/);
    expect(() => loadBotSettings({ ...rest, NODE_ENV: "development" })).toThrow(/WEBHOOK_SECRET is required/);
  });

  it("derives the farm's record stream keys from NETSTRESS_STREAM_SECRET, else the webhook secret, and refuses a short one", () => {
    const own = "s".repeat(32);
    expect(loadBotSettings(base).streamSecret).toBe(base.WEBHOOK_SECRET);
    expect(loadBotSettings({ ...base, NETSTRESS_STREAM_SECRET: "" }).streamSecret).toBe(base.WEBHOOK_SECRET);
    expect(loadBotSettings({ ...base, NETSTRESS_STREAM_SECRET: own }).streamSecret).toBe(own);
    expect(() => loadBotSettings({ ...base, NETSTRESS_STREAM_SECRET: "short" })).toThrow(
      /NETSTRESS_STREAM_SECRET/,
    );
  });

  it("points at GitHub Enterprise Server when GHE_HOST is set", () => {
    expect(loadBotSettings({ ...base, GHE_HOST: "ghe.corp", GHE_PROTOCOL: "http" }).githubBaseUrl).toBe(
      "http://ghe.corp/api/v3",
    );
  });

  it("reads the key from PRIVATE_KEY_PATH and says which file failed", () => {
    const { PRIVATE_KEY: _, ...rest } = base;
    expect(loadBotSettings({ ...rest, PRIVATE_KEY_PATH: "/k.pem" }, () => "PEM").privateKey).toBe("PEM");
    expect(() =>
      loadBotSettings({ ...rest, PRIVATE_KEY_PATH: "/nope.pem" }, () => {
        throw new Error("ENOENT");
      }),
    ).toThrow("PRIVATE_KEY_PATH /nope.pem cannot be read");
    expect(() => loadBotSettings(rest)).toThrow(SettingsError);
  });

  it("names every bad setting at once", () => {
    expect(() => loadBotSettings({ APP_ID: "x", PORT: "99999", NETSTRESS_REDIS_URL: "http://h" })).toThrow(
      /APP_ID: [^]*PORT: [^]*NETSTRESS_REDIS_URL: [^]*PRIVATE_KEY: /,
    );
  });
});
