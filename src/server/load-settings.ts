import { readFileSync } from "node:fs";
import { z } from "zod";
import { botEnvSchema, botSettingsFrom, SettingsError, type BotSettings } from "../config/bot-settings.ts";
import { gateEnvSchema, gateSettingsFrom, type GateSettings } from "../config/gate-settings.ts";
import { diskEnvSchema, diskSettingsFrom, type DiskSettings } from "../config/disk-settings.ts";
import { historyEnvSchema, historySettingsFrom, type HistorySettings } from "../config/history-settings.ts";
import {
  registryEnvSchema,
  registrySettingsFrom,
  type RegistrySettings,
} from "../config/registry-settings.ts";
import { tagFilterFromEnv, type TagFilter } from "../payload/tag-filter.ts";

/** Settings `netstress serve` reads outside the schemas of its parts. */
export const serveEnvSchema = z.looseObject({
  EXTENSION_BINARY_OVERRIDE_INCLUDE_TAGS: z
    .string()
    .optional()
    .describe(
      "comma-separated payload tags probed for test binaries, as in openshift-tests; set: only these",
    ),
  EXTENSION_BINARY_OVERRIDE_EXCLUDE_TAGS: z
    .string()
    .optional()
    .describe("comma-separated payload tags never probed for test binaries (when no include list is set)"),
  NETSTRESS_EXTENSION_IMAGESTREAMS: z
    .string()
    .optional()
    .describe(
      "comma-separated ImageStream files whose tags annotated testextension.redhat.io/component name extensions outside the payload",
    ),
  NETSTRESS_PERIODICS_CONFIG: z
    .string()
    .min(1)
    .optional()
    .describe(
      "the release periodics (YAML: periodics[] of name, stream, arches, cron, iterations …), reloaded when it changes; needs NETSTRESS_RELEASE_CONTROLLER_URL",
    ),
  NETSTRESS_QUARANTINE_CONFIG: z
    .string()
    .min(1)
    .optional()
    .describe("the quarantine list (YAML: quarantine[] of test, reason, since): tests that never fail a PR"),
  NETSTRESS_FARM_CONFIG: z
    .string()
    .min(1)
    .optional()
    .describe(
      "the build-farm configuration file (below); unset: runs execute in the worker itself (local executor)",
    ),
});

/** Every setting of `netstress serve`, parsed once at the entry. */
export interface Settings {
  bot: BotSettings;
  gate: GateSettings;
  history: HistorySettings;
  /** Which registries and layouts images are read from, and what one plan may cost. */
  registry: RegistrySettings;
  /** Retention of run data and binaries, and the image cache's size. */
  disk: DiskSettings;
  /** The build-farm configuration file; absent: the embedded local executor. */
  farmConfigPath?: string;
  /** The release periodics' configuration file; absent: no periodics. */
  periodicsConfigPath?: string;
  /** The quarantine list; absent: nothing quarantined. */
  quarantineConfigPath?: string;
  /** Which components carry test binaries beyond the payload's own discovery. */
  discovery: { tagFilter: TagFilter; extensionImageStreams: string[] };
}

/**
 * Reads and validates the whole environment — the bot's, the gate's, the history pool's and the
 * farm's — before anything connects, and names every problem at once in one SettingsError.
 */
export function loadSettings(
  env: NodeJS.ProcessEnv = process.env,
  readKey: (path: string) => string = (path) => readFileSync(path, "utf8"),
): Settings {
  const problems: string[] = [];
  const parse = <T extends z.ZodType>(schema: T): z.infer<T> | undefined => {
    const parsed = schema.safeParse(env);
    if (parsed.success) return parsed.data;
    problems.push(...parsed.error.issues.map((i) => `${i.path.join(".") || "environment"}: ${i.message}`));
    return undefined;
  };
  const bot = parse(botEnvSchema);
  const gateEnv = parse(gateEnvSchema);
  const history = parse(historyEnvSchema);
  const serve = parse(serveEnvSchema);
  const registry = parse(registryEnvSchema);
  const disk = parse(diskEnvSchema);
  const gate = gateEnv && gateSettingsFrom(gateEnv);
  if (gate && !gate.ok) problems.push(...gate.problems);
  if (serve?.NETSTRESS_PERIODICS_CONFIG && !gateEnv?.NETSTRESS_RELEASE_CONTROLLER_URL) {
    problems.push(
      "NETSTRESS_PERIODICS_CONFIG is set but NETSTRESS_RELEASE_CONTROLLER_URL is not: periodics find each stream's newest payload through it",
    );
  }
  if (problems.length > 0 || !bot || !gate?.ok || !history || !serve || !registry || !disk) {
    throw new SettingsError(`the settings are incomplete or wrong:\n${problems.join("\n")}`);
  }
  return {
    bot: botSettingsFrom(bot, readKey),
    gate: gate.settings,
    history: historySettingsFrom(history),
    registry: registrySettingsFrom(registry),
    disk: diskSettingsFrom(disk),
    ...(serve.NETSTRESS_FARM_CONFIG ? { farmConfigPath: serve.NETSTRESS_FARM_CONFIG } : {}),
    ...(serve.NETSTRESS_PERIODICS_CONFIG ? { periodicsConfigPath: serve.NETSTRESS_PERIODICS_CONFIG } : {}),
    ...(serve.NETSTRESS_QUARANTINE_CONFIG ? { quarantineConfigPath: serve.NETSTRESS_QUARANTINE_CONFIG } : {}),
    discovery: {
      tagFilter: tagFilterFromEnv(env),
      extensionImageStreams: (serve.NETSTRESS_EXTENSION_IMAGESTREAMS ?? "")
        .split(",")
        .map((path) => path.trim())
        .filter(Boolean),
    },
  };
}
