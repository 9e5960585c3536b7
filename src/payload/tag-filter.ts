/**
 * Which payload tags are probed for test binaries, as openshift-tests reads
 * `EXTENSION_BINARY_OVERRIDE_INCLUDE_TAGS` and `EXTENSION_BINARY_OVERRIDE_EXCLUDE_TAGS`: comma-separated
 * tags; when the include list names any tag, only those are probed and the exclude list is not
 * consulted; otherwise every tag but the excluded ones is.
 */
export interface TagFilter {
  include: readonly string[];
  exclude: readonly string[];
}

const INCLUDE = "EXTENSION_BINARY_OVERRIDE_INCLUDE_TAGS";
const EXCLUDE = "EXTENSION_BINARY_OVERRIDE_EXCLUDE_TAGS";

const tags = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");

/** The filter the environment sets (both lists empty when neither variable is set). */
export function tagFilterFromEnv(env: NodeJS.ProcessEnv): TagFilter {
  return { include: tags(env[INCLUDE]), exclude: tags(env[EXCLUDE]) };
}
