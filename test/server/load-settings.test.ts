import { describe, expect, it } from "vitest";
import { SettingsError } from "../../src/config/bot-settings.ts";
import { loadSettings } from "../../src/server/load-settings.ts";
import { runNetstress } from "../helpers/run-netstress.ts";

const base = {
  APP_ID: "123",
  PRIVATE_KEY: "-----BEGIN KEY-----\\nabc\\n-----END KEY-----",
  WEBHOOK_SECRET: "s",
};

describe("the settings of netstress serve", () => {
  it("are read once, for every part: bot, gate, history pool, farm and discovery", () => {
    const settings = loadSettings({
      ...base,
      NETSTRESS_RELEASE_CONTROLLER_URL: "https://rc.example.com/",
      NETSTRESS_GATE_PARALLEL: "4",
      NETSTRESS_HISTORY_MAX_RUNS: "50",
      NETSTRESS_FARM_CONFIG: "/etc/netstress/farm.yaml",
      EXTENSION_BINARY_OVERRIDE_EXCLUDE_TAGS: "etcd, hyperkube",
      NETSTRESS_EXTENSION_IMAGESTREAMS: "/a.yaml,/b.yaml",
    });
    expect(settings).toMatchObject({
      bot: { appId: 123, webhookSecret: "s" },
      gate: { releaseControllerUrl: "https://rc.example.com", parallel: 4, timeoutMinutes: 360 },
      history: { windowDays: 14, maxRuns: 50 },
      farmConfigPath: "/etc/netstress/farm.yaml",
      discovery: {
        tagFilter: { include: [], exclude: ["etcd", "hyperkube"] },
        extensionImageStreams: ["/a.yaml", "/b.yaml"],
      },
    });
    // Run page addresses are keyed with a key of their own, never the webhook secret itself.
    expect(settings.bot.runIdSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(settings.bot.runIdSecret).toBe(loadSettings(base).bot.runIdSecret);
  });

  it("take the repository assembled PR payloads are pushed to, and refuse one with a tag", () => {
    expect(
      loadSettings({ ...base, NETSTRESS_PR_PAYLOAD_REPOSITORY: "quay.io/netstress/pr-payloads" }).registry,
    ).toMatchObject({ prPayloadRepository: "quay.io/netstress/pr-payloads" });
    expect(loadSettings(base).registry.prPayloadRepository).toBeUndefined();
    expect(() =>
      loadSettings({ ...base, NETSTRESS_PR_PAYLOAD_REPOSITORY: "quay.io/netstress/pr-payloads:latest" }),
    ).toThrow(/NETSTRESS_PR_PAYLOAD_REPOSITORY: a registry repository alone .*no tag, digest or oci: layout/);
  });

  it("name every problem at once, whichever part it belongs to", () => {
    const env = {
      ...base,
      PORT: "99999",
      NETSTRESS_GATE_TOKENS_PATH: "/tokens",
      NETSTRESS_GATE_TIMEOUT_MINUTES: "0",
      NETSTRESS_HISTORY_WINDOW_DAYS: "1000",
    };
    expect(() => loadSettings(env)).toThrow(SettingsError);
    const message = (() => {
      try {
        loadSettings(env);
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const problem of ["PORT", "NETSTRESS_GATE_TIMEOUT_MINUTES", "NETSTRESS_HISTORY_WINDOW_DAYS"]) {
      expect(message).toContain(problem);
    }
  });

  it("stop `netstress serve` with a one-line reason per problem, not a stack trace", async () => {
    const result = await runNetstress(["serve"], {
      env: {
        PATH: process.env.PATH,
        ...base,
        NETSTRESS_GATE_TOKENS_PATH: "/tokens",
        NETSTRESS_HISTORY_MAX_RUNS: "many",
      },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("NETSTRESS_HISTORY_MAX_RUNS");
    expect(result.stderr).toContain("NETSTRESS_RELEASE_CONTROLLER_URL is not");
    expect(result.stderr).not.toContain("unexpected error");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
