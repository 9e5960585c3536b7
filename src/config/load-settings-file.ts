import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import type { z } from "zod";
import { SettingsError } from "./bot-settings.ts";

/**
 * Reads a settings file the operator names in an environment variable (YAML, or JSON), checked
 * against its schema; a file that cannot be read or used is a SettingsError naming the variable,
 * the path and every problem.
 */
export async function loadSettingsFile<T extends z.ZodType>(options: {
  variable: string;
  path: string;
  /** What the file should be, for the message ("a periodics configuration"). */
  what: string;
  schema: T;
}): Promise<z.infer<T>> {
  const { variable, path } = options;
  const text = await readFile(path, "utf8").catch((cause: unknown) => {
    throw new SettingsError(`${variable} ${path} cannot be read: ${(cause as Error).message}`, { cause });
  });
  let value: unknown;
  try {
    value = parse(text) ?? {};
  } catch (cause) {
    throw new SettingsError(`${variable} ${path} is not YAML: ${(cause as Error).message}`, { cause });
  }
  const parsed = options.schema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`);
    throw new SettingsError(`${variable} ${path} is not ${options.what}:\n${problems.join("\n")}`);
  }
  return parsed.data;
}
