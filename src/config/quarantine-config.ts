import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import { z } from "zod";
import { SettingsError } from "./bot-settings.ts";

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

/** Reads the quarantine list (YAML); every problem named with its path. */
export async function loadQuarantineConfig(path: string): Promise<QuarantineConfig> {
  const text = await readFile(path, "utf8").catch((cause: unknown) => {
    throw new SettingsError(
      `NETSTRESS_QUARANTINE_CONFIG ${path} cannot be read: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  });
  const parsed = quarantineConfigSchema.safeParse(parse(text) ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`);
    throw new SettingsError(
      `NETSTRESS_QUARANTINE_CONFIG ${path} is not a quarantine list:\n${problems.join("\n")}`,
    );
  }
  return parsed.data;
}
