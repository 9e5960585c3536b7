import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { parseImageReference } from "../registry/image-reference.ts";
import { RegistryError } from "../registry/registry-error.ts";
import { PayloadError } from "./payload-error.ts";

/** A test extension outside the payload, named by the annotations of an ImageStream tag. */
export interface ExtensionImageStreamTag {
  /** `testextension.redhat.io/component`: the component's name in the plan. */
  component: string;
  /** `namespace/name:tag` of the ImageStream tag that names it. */
  imageStreamTag: string;
  pullspec: string;
  /** The binary path of `testextension.redhat.io/binary`. */
  binaryPath: string;
  /** The arguments after the path in `testextension.redhat.io/binary`, passed ahead of the OTE verbs. */
  binaryArgs: string[];
}

const COMPONENT = "testextension.redhat.io/component";
const BINARY = "testextension.redhat.io/binary";
const NAME = /^[a-z0-9][a-z0-9._-]*$/i;

const annotations = z.record(z.string(), z.string()).nullish();
const metadata = z.looseObject({ name: z.string().min(1), namespace: z.string().optional(), annotations });
const imageStreamSchema = z.looseObject({
  kind: z.literal("ImageStream"),
  metadata,
  spec: z
    .looseObject({
      tags: z
        .array(
          z.looseObject({
            name: z.string().min(1),
            annotations,
            from: z.looseObject({ kind: z.string(), name: z.string().min(1) }).optional(),
          }),
        )
        .default([]),
    })
    .default({ tags: [] }),
});
/** `oc get istag NAME:TAG -o yaml`: the annotations are the tag's, the image is the imported one. */
const imageStreamTagSchema = z.looseObject({
  kind: z.literal("ImageStreamTag"),
  metadata,
  image: z.looseObject({ dockerImageReference: z.string().min(1) }).optional(),
  tag: z.looseObject({ from: z.looseObject({ name: z.string().min(1) }).optional() }).nullish(),
});
const documentSchema = z.union([
  imageStreamSchema,
  imageStreamTagSchema,
  z.looseObject({ kind: z.literal("List"), items: z.array(z.unknown()) }),
]);

/**
 * Reads the non-payload test extensions of an ImageStream file (JSON or YAML: an ImageStream, an
 * ImageStreamTag, or a List of them, as `oc get -o yaml` prints them). Tags without the component
 * annotation are not extensions and are passed over; a tag with the component but no binary
 * annotation, or a malformed one, is refused with what to fix.
 */
export async function loadExtensionImageStreams(path: string): Promise<ExtensionImageStreamTag[]> {
  const fail = (why: string, cause?: unknown): never => {
    throw new PayloadError("invalid-extension-imagestream", `--extension-imagestream ${path}: ${why}`, {
      cause,
    });
  };
  let value: unknown;
  try {
    value = parseYaml(await readFile(path, "utf8"));
  } catch (cause) {
    fail((cause as Error).message, cause);
  }
  const found: ExtensionImageStreamTag[] = [];
  const visit = (document: unknown) => {
    const parsed = documentSchema.safeParse(document);
    if (!parsed.success) {
      const kind = (document as { kind?: unknown } | null)?.kind;
      fail(
        kind === "ImageStream" || kind === "ImageStreamTag" || kind === "List"
          ? z.prettifyError(parsed.error)
          : `expected an ImageStream, an ImageStreamTag or a List of them; found kind ${JSON.stringify(kind)}`,
      );
    }
    const doc = parsed.data!;
    if (doc.kind === "List") return doc.items.forEach(visit);
    const namespace = doc.metadata.namespace ?? "";
    if (doc.kind === "ImageStream") {
      for (const tag of doc.spec.tags) {
        const where = `${namespace}/${doc.metadata.name}:${tag.name}`;
        if (!tag.annotations?.[COMPONENT]) continue;
        if (tag.from?.kind !== "DockerImage") fail(`${where}: from must be a DockerImage pullspec`);
        found.push(extension(where, tag.annotations, tag.from!.name, fail));
      }
      return;
    }
    const where = `${namespace}/${doc.metadata.name}`;
    if (!doc.metadata.annotations?.[COMPONENT]) return;
    const pullspec = doc.image?.dockerImageReference ?? doc.tag?.from?.name;
    if (!pullspec) fail(`${where}: has no image (image.dockerImageReference) to read the binary from`);
    found.push(extension(where, doc.metadata.annotations, pullspec!, fail));
  };
  visit(value);
  const seen = new Set<string>();
  for (const e of found) {
    if (seen.has(e.component)) fail(`component ${e.component} is named by more than one tag`);
    seen.add(e.component);
  }
  return found;
}

function extension(
  where: string,
  notes: Record<string, string>,
  pullspec: string,
  fail: (why: string, cause?: unknown) => never,
): ExtensionImageStreamTag {
  const component = notes[COMPONENT]!.trim();
  if (!NAME.test(component))
    fail(`${where}: ${COMPONENT} "${component}" is not a component name (letters, digits, . _ -)`);
  const [binaryPath, ...binaryArgs] = (notes[BINARY] ?? "").trim().split(/\s+/).filter(Boolean);
  if (!binaryPath)
    fail(`${where}: ${COMPONENT} is set but ${BINARY} (the binary's path in the image) is not`);
  if (!binaryPath!.startsWith("/"))
    fail(`${where}: ${BINARY} must start with the binary's absolute path, got "${binaryPath}"`);
  try {
    parseImageReference(pullspec);
  } catch (cause) {
    fail(`${where}: ${cause instanceof RegistryError ? cause.message : String(cause)}`, cause);
  }
  return { component, imageStreamTag: where, pullspec, binaryPath: binaryPath!, binaryArgs };
}
