import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import defaults from "./default-test-binaries.json" with { type: "json" };
import { PayloadError } from "./payload-error.ts";

const entrySchema = z.object({ tag: z.string().min(1), path: z.string().startsWith("/").optional() });

/**
 * Which payload tags are known to carry an OTE test binary, and where in their image. Configuration,
 * not code: the defaults follow openshift/origin's extension table (`/usr/bin/<tag>-tests-ext.gz`
 * unless the component says otherwise, e.g. hyperkube → /usr/bin/k8s-tests-ext.gz). Tags the table
 * does not list are still discovered at the default path or as referrers; listing a tag makes the
 * plan show it even when its binary is missing, and is how a component's exception is stated.
 * `versions` adjusts the table for releases whose table differed (origin's changes every release).
 */
export const testBinaryRegistrySchema = z.object({
  /** `{tag}` is replaced by the payload tag. */
  defaultPath: z.string().startsWith("/").default("/usr/bin/{tag}-tests-ext.gz"),
  components: z.array(entrySchema),
  versions: z
    .array(
      z.object({
        /** Release minor versions this applies to, e.g. ["4.18", "4.19"]; matched against the payload's name. */
        versions: z.array(z.string().regex(/^\d+\.\d+$/, "expected MAJOR.MINOR, e.g. 4.18")).min(1),
        /** Entries added (or replacing the base entry of the same tag) for those versions. */
        components: z.array(entrySchema).default([]),
        /** Tags the table of those versions does not list. */
        remove: z.array(z.string().min(1)).default([]),
      }),
    )
    .optional(),
});
export type TestBinaryRegistry = z.infer<typeof testBinaryRegistrySchema>;
/** The table in force for one release: each listed tag with its binary path. */
export type TestBinaryTable = ReadonlyMap<string, string>;

export const DEFAULT_TEST_BINARY_REGISTRY: TestBinaryRegistry = testBinaryRegistrySchema.parse(defaults);

/** Where the tag's image keeps its test binary (the base table; per-version entries need testBinaryTable). */
export function testBinaryPath(registry: TestBinaryRegistry, tag: string): string {
  const entry = registry.components.find((c) => c.tag === tag);
  return entry?.path ?? conventionalPath(registry, tag);
}

/** `/usr/bin/<tag>-tests-ext.gz`, or whatever the registry's default path says. */
export function conventionalPath(registry: TestBinaryRegistry, tag: string): string {
  return registry.defaultPath.replaceAll("{tag}", tag);
}

/**
 * The table for a release, by its name (`4.18.0-0.nightly-…` is 4.18): the base entries, then the
 * `versions` blocks that name that minor version, in order. A name without a version gets the base.
 */
export function testBinaryTable(options: { registry: TestBinaryRegistry; release: string }): TestBinaryTable {
  const { registry } = options;
  const minor = /^(\d+\.\d+)(?:\.|$|-)/.exec(options.release)?.[1];
  const table = new Map(registry.components.map((c) => [c.tag, c.path ?? conventionalPath(registry, c.tag)]));
  for (const block of registry.versions ?? []) {
    if (!minor || !block.versions.includes(minor)) continue;
    for (const tag of block.remove) table.delete(tag);
    for (const c of block.components) table.set(c.tag, c.path ?? conventionalPath(registry, c.tag));
  }
  return table;
}

/** Reads a registry from a JSON or YAML file (same shape as default-test-binaries.json). */
export async function loadTestBinaryRegistry(path: string): Promise<TestBinaryRegistry> {
  let value: unknown;
  try {
    value = parseYaml(await readFile(path, "utf8"));
  } catch (cause) {
    throw new PayloadError(
      "invalid-binary-registry",
      `cannot read test binary registry ${path}: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  const parsed = testBinaryRegistrySchema.safeParse(value);
  if (!parsed.success) {
    throw new PayloadError(
      "invalid-binary-registry",
      `test binary registry ${path}: ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}
