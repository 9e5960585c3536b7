import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { botEnvSchema } from "../../src/config/bot-settings.ts";
import { gateEnvSchema } from "../../src/config/gate-settings.ts";
import { historyEnvSchema } from "../../src/config/history-settings.ts";
import {
  BOT_ENV_DESCRIPTIONS,
  DOC_PATH,
  renderSettingsReference,
  withSettingsReference,
} from "../../scripts/generate-operations-settings.ts";

const doc = readFileSync(DOC_PATH, "utf8");

describe("docs/operations.md", () => {
  it("has the settings reference the schemas generate (npx tsx scripts/generate-operations-settings.ts)", () => {
    expect(doc).toContain(renderSettingsReference());
    expect(withSettingsReference(doc)).toBe(doc);
  });

  it("describes every environment setting of the bot, the gate and the history pool", () => {
    expect(Object.keys(BOT_ENV_DESCRIPTIONS).sort()).toEqual(Object.keys(botEnvSchema.shape).sort());
    for (const schema of [gateEnvSchema, historyEnvSchema]) {
      for (const [name, setting] of Object.entries(schema.shape))
        expect(setting.description, name).toMatch(/\w{3}/);
    }
    for (const name of [
      ...Object.keys(botEnvSchema.shape),
      ...Object.keys(gateEnvSchema.shape),
      ...Object.keys(historyEnvSchema.shape),
    ]) {
      expect(doc).toMatch(new RegExp(`\\| \`${name}\` \\| [^|]+ \\| [^|]+ \\| \\S`));
    }
  });

  it("explains every alert the PrometheusRule ships", () => {
    const rule = parse(
      readFileSync(new URL("../../deploy/monitoring/prometheusrule.yaml", import.meta.url), "utf8"),
    );
    const alerts: string[] = rule.spec.groups.flatMap((group: { rules: { alert: string }[] }) =>
      group.rules.map((r) => r.alert),
    );
    const alertSection = doc.slice(doc.indexOf("## Alerts"), doc.indexOf("## Logs"));
    const documented = [...alertSection.matchAll(/^\| `(\w+)`\s*\|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...alerts].sort());
  });

  it("is linked from the README", () => {
    expect(readFileSync(new URL("../../README.md", import.meta.url), "utf8")).toContain("docs/operations.md");
  });
});
