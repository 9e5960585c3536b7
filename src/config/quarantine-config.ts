import { z } from "zod";
import { loadSettingsFile } from "./load-settings-file.ts";

/** Tests that never fail a PR's conclusion: they still run and are reported, with why and since when. */
export const quarantineConfigSchema = z.strictObject({
  quarantine: z.array(
    z.strictObject({
      test: z.string().min(1).describe("The test's full name, as the binaries list it."),
      reason: z.string().min(1).max(500).describe("Why, in words every report shows (a bug link, say)."),
      since: z.iso.date().describe("When it was quarantined (YYYY-MM-DD)."),
    }),
  ),
});
export type QuarantineConfig = z.infer<typeof quarantineConfigSchema>;

/** Reads the file NETSTRESS_QUARANTINE_CONFIG names; every problem named with its path. */
export function loadQuarantineConfig(path: string): Promise<QuarantineConfig> {
  return loadSettingsFile({
    variable: "NETSTRESS_QUARANTINE_CONFIG",
    path,
    what: "a quarantine list",
    schema: quarantineConfigSchema,
  });
}
