import { z } from "zod";
import { farmConfigSchema } from "./farm-config.ts";

/** The JSON Schema of the farm configuration as operators write it (defaults optional). */
export function farmConfigJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(farmConfigSchema, { io: "input", unrepresentable: "any" }),
    $id: "https://github.com/network-stress-bot/schemas/farm-config.schema.json",
    title: "netstress build-farm configuration",
  };
}
