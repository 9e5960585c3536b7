import { parse as parseYaml, YAMLParseError } from "yaml";
import type { z } from "zod";
import { DEFAULT_REPO_CONFIG, REPO_CONFIG_PATH, repoConfigSchema, type RepoConfig } from "./repo-config.ts";

export type RepoConfigResult =
  | { kind: "absent"; config: RepoConfig }
  | { kind: "valid"; config: RepoConfig }
  | { kind: "invalid"; problems: string[] };

/**
 * Parses the text of `.github/network-stress.yml` (undefined when the file does not exist). Every
 * problem is returned with the key it concerns, so the check run can say what to fix.
 */
export function parseRepoConfig(text: string | undefined): RepoConfigResult {
  if (text === undefined) return { kind: "absent", config: DEFAULT_REPO_CONFIG };
  let value: unknown;
  try {
    value = parseYaml(text) ?? {};
  } catch (error) {
    const reason = error instanceof YAMLParseError ? error.message.split("\n")[0] : String(error);
    return { kind: "invalid", problems: [`${REPO_CONFIG_PATH} is not valid YAML: ${reason}`] };
  }
  const parsed = repoConfigSchema.safeParse(value);
  return parsed.success
    ? { kind: "valid", config: parsed.data }
    : { kind: "invalid", problems: describeIssues(parsed.error.issues) };
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const key = issue.path.join(".");
    return key ? `${key}: ${issue.message}` : issue.message;
  });
}
