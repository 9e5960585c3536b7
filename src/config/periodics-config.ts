import { z } from "zod";
import { loadSettingsFile } from "./load-settings-file.ts";
import { archSchema } from "@netstress/core/arch/arch.ts";
import { streamNameSchema } from "./stream-name.ts";

/** One release periodic: the newest payload of a stream stressed on some arches, on a schedule. */
export const periodicSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lower-case letters, digits and '-', at most 63")
    .describe("Names the periodic in logs and run pages."),
  stream: streamNameSchema.describe("The release stream whose newest payload is stressed."),
  arches: z
    .array(archSchema)
    .min(1)
    .refine((arches) => new Set(arches).size === arches.length, "each arch at most once")
    .describe("One run per arch and payload."),
  cron: z
    .string()
    .regex(/^\s*(\S+\s+){4,5}\S+\s*$/, "a cron pattern of 5 or 6 fields, e.g. '0 */4 * * *'")
    .describe("When to look for a new payload (cron, UTC); a payload already stressed is skipped."),
  iterations: z.int().min(1).max(1000).default(20),
  suite: z.string().min(1).max(200).optional(),
  focus: z.string().min(1).max(200).optional(),
  parallel: z.int().min(1).max(256).default(8),
  timeout_minutes: z.int().min(1).default(360),
});
export type Periodic = z.infer<typeof periodicSchema>;

export const periodicsConfigSchema = z.strictObject({
  periodics: z
    .array(periodicSchema)
    .refine(
      (list) => new Set(list.map((p) => p.name)).size === list.length,
      "each periodic name at most once",
    ),
});
export type PeriodicsConfig = z.infer<typeof periodicsConfigSchema>;

/** Reads the file NETSTRESS_PERIODICS_CONFIG names; every problem named with its path. */
export function loadPeriodicsConfig(path: string): Promise<PeriodicsConfig> {
  return loadSettingsFile({
    variable: "NETSTRESS_PERIODICS_CONFIG",
    path,
    what: "a periodics configuration",
    schema: periodicsConfigSchema,
  });
}
