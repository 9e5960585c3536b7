import { z } from "zod";

/** How much of its disk the bot keeps: run data and binaries by age, the image cache by size. */
export const diskEnvSchema = z.looseObject({
  NETSTRESS_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(365)
    .default(14)
    .describe(
      "a run's directory (results, report) goes this many days after it ended, never while the run is active",
    ),
  NETSTRESS_BINARY_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(365 * 24)
    .default(48)
    .describe(
      "binaries (unpacked and fetched) no run used for this many hours go: they are most of the disk (bench/disk). A `more` on a run whose binaries went fetches them again by digest; one whose images are gone too fails: trigger the run again",
    ),
  NETSTRESS_CACHE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024 * 1024)
    .default(4 * 1024 ** 3)
    .describe(
      "the image cache's size; least recently used blobs not linked by a binary are evicted beyond it",
    ),
});

export interface DiskSettings {
  retentionDays: number;
  binaryRetentionHours: number;
  cacheMaxBytes: number;
}

export function diskSettingsFrom(e: z.infer<typeof diskEnvSchema>): DiskSettings {
  return {
    retentionDays: e.NETSTRESS_RETENTION_DAYS,
    binaryRetentionHours: e.NETSTRESS_BINARY_RETENTION_HOURS,
    cacheMaxBytes: e.NETSTRESS_CACHE_MAX_BYTES,
  };
}

export const DEFAULT_DISK_SETTINGS: DiskSettings = diskSettingsFrom(diskEnvSchema.parse({}));
