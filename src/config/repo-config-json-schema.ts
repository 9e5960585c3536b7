import { z } from "zod";
import { REPO_CONFIG_PATH, repoConfigSchema } from "./repo-config.ts";

/**
 * The JSON Schema of `.github/network-stress.yml` as its authors write it (defaults optional),
 * committed under schemas/ for editors and validators.
 */
export function repoConfigJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(repoConfigSchema, { io: "input", unrepresentable: "any" }),
    $id: "https://github.com/network-stress-bot/schemas/network-stress.schema.json",
    title: REPO_CONFIG_PATH,
  };
}
