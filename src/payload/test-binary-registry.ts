import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import defaults from "./default-test-binaries.json" with { type: "json" };
import { PayloadError } from "./payload-error.ts";

/**
 * Which payload tags carry an OTE test binary, and where in their image. Configuration, not code:
 * the defaults follow openshift/origin's extension table (`/usr/bin/<tag>-tests-ext.gz` unless
 * the component says otherwise, e.g. hyperkube → /usr/bin/k8s-tests-ext.gz).
 */
export const testBinaryRegistrySchema = z.object({
  /** `{tag}` is replaced by the payload tag. */
  defaultPath: z.string().startsWith("/").default("/usr/bin/{tag}-tests-ext.gz"),
  components: z.array(z.object({ tag: z.string().min(1), path: z.string().startsWith("/").optional() })),
});
export type TestBinaryRegistry = z.infer<typeof testBinaryRegistrySchema>;

export const DEFAULT_TEST_BINARY_REGISTRY: TestBinaryRegistry = testBinaryRegistrySchema.parse(defaults);

/** Where the tag's image keeps its test binary. */
export function testBinaryPath(registry: TestBinaryRegistry, tag: string): string {
  const entry = registry.components.find((c) => c.tag === tag);
  return entry?.path ?? registry.defaultPath.replaceAll("{tag}", tag);
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
