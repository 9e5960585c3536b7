// Regenerates the committed JSON Schemas from the zod schemas: npx tsx schemas/generate.ts
import { writeFile } from "node:fs/promises";
import { repoConfigJsonSchema } from "../src/config/repo-config-json-schema.ts";
import { farmConfigJsonSchema } from "../src/farm/farm-config-json-schema.ts";
import { gateOpenApiDocument } from "../src/gate/gate-openapi.ts";

export const GENERATED_SCHEMAS = {
  "network-stress.schema.json": repoConfigJsonSchema,
  "farm-config.schema.json": farmConfigJsonSchema,
  "gate-api.openapi.json": gateOpenApiDocument,
};

export function renderSchema(schema: Record<string, unknown>): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [file, generate] of Object.entries(GENERATED_SCHEMAS)) {
    await writeFile(new URL(file, import.meta.url), renderSchema(generate()));
  }
}
