import type { BotSettings } from "../../src/config/bot-settings.ts";
import { DEFAULT_DISK_SETTINGS } from "../../src/config/disk-settings.ts";
import { gateEnvSchema, gateSettingsFrom } from "../../src/config/gate-settings.ts";
import { historyEnvSchema, historySettingsFrom } from "../../src/config/history-settings.ts";
import { DEFAULT_REGISTRY_SETTINGS } from "../../src/config/registry-settings.ts";
import type { Settings } from "../../src/server/load-settings.ts";
import { tagFilterFromEnv } from "../../src/payload/tag-filter.ts";

/**
 * Settings as loadSettings would return them for an environment that sets only the bot's part:
 * every other part at its default, no quarantine by flakiness (a test's history is its own), and
 * `parts` over that.
 */
export function botTestSettings(bot: BotSettings, parts: Partial<Omit<Settings, "bot">> = {}): Settings {
  const gate = gateSettingsFrom(gateEnvSchema.parse({}));
  if (!gate.ok) throw new Error(gate.problems.join("; "));
  return {
    bot,
    gate: gate.settings,
    history: { ...historySettingsFrom(historyEnvSchema.parse({})), flakyPayloads: 0 },
    registry: DEFAULT_REGISTRY_SETTINGS,
    disk: DEFAULT_DISK_SETTINGS,
    discovery: { tagFilter: tagFilterFromEnv({}), extensionImageStreams: [] },
    ...parts,
  };
}
