import { join } from "node:path";
import type { Logger } from "pino";
import type { BotSettings } from "../config/bot-settings.ts";
import type { DiskSettings } from "../config/disk-settings.ts";
import type { RegistrySettings } from "../config/registry-settings.ts";
import { createRegistry, type Registry } from "../registry/create-registry.ts";
import { operatorRegistryOptions } from "../registry/operator-registry-options.ts";

/**
 * The bot's one registry client, as every process of it builds it: its cache in the data
 * directory, the operator's credentials and allow-list, and the operator's own images (default
 * payload and PR image, the PR payload repository, which is written to and read back) allowed.
 */
export async function createBotRegistry(options: {
  bot: Pick<BotSettings, "defaults">;
  /** Resolved already. */
  dataDir: string;
  disk: DiskSettings;
  access: RegistrySettings;
  logger?: Logger;
}): Promise<Registry> {
  const { bot, access } = options;
  return createRegistry({
    cacheDir: join(options.dataDir, "cache"),
    cacheMaxBytes: options.disk.cacheMaxBytes,
    ...(options.logger ? { logger: options.logger } : {}),
    ...operatorRegistryOptions({
      access,
      operatorImages: [bot.defaults.payload, bot.defaults.prImage, access.prPayloadRepository].filter(
        (i) => i !== undefined,
      ),
    }),
  });
}
