import type { ImageFile } from "../registry/read-image-directory.ts";
import { parseImageReferences } from "./image-references.ts";
import { PayloadError } from "./payload-error.ts";

/** A payload tag's new image: pinned by digest, with the commit and repository its labels name. */
export interface TagReplacement {
  tag: string;
  pullspec: string;
  commit: string | null;
  sourceLocation: string | null;
}

/** What a tag pointed at before and after. */
export interface ReplacedTag {
  tag: string;
  from: string;
  to: string;
}

export const IMAGE_REFERENCES_FILE = "release-manifests/image-references";
const COMMIT = "io.openshift.build.commit.id";
const SOURCE = "io.openshift.build.source-location";

/** Every occurrence of `from` in the bytes replaced by `to`; every other byte as it was. */
function replaceBytes(bytes: Buffer, from: Buffer, to: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (let found = bytes.indexOf(from, at); found >= 0; found = bytes.indexOf(from, at)) {
    parts.push(bytes.subarray(at, found), to);
    at = found + from.length;
  }
  if (at === 0) return bytes;
  parts.push(bytes.subarray(at));
  return Buffer.concat(parts);
}

/**
 * What `oc adm release new --from-release BASE TAG=IMAGE…` changes in a release's manifests:
 * image-references points each replaced tag at its new image (and carries that image's commit and
 * repository annotations), and every other manifest under release-manifests/ that names a replaced
 * tag's old pullspec names the new one instead, byte for byte. Returns only the files that changed
 * (the layer put over the base's); a tag the release does not have is refused. Pure.
 */
export function rewriteReleaseManifests(options: {
  files: ReadonlyMap<string, ImageFile>;
  replacements: readonly TagReplacement[];
  /** The base release, for messages. */
  source: string;
}): { changed: Map<string, ImageFile>; replaced: ReplacedTag[] } {
  const original = options.files.get(IMAGE_REFERENCES_FILE);
  if (!original) {
    throw new PayloadError(
      "no-image-references",
      `${options.source} is not a release payload: it has no /${IMAGE_REFERENCES_FILE}`,
    );
  }
  const text = original.bytes.toString("utf8");
  const references = parseImageReferences({ text, source: options.source });
  const known = new Set(references.tags.map((t) => t.tag));
  const unknown = options.replacements.filter((r) => !known.has(r.tag)).map((r) => r.tag);
  if (unknown.length > 0) {
    const tags = [...known].sort();
    throw new PayloadError(
      "unknown-tag",
      `${options.source} has no tag ${unknown.join(", ")}; its ${tags.length} tags are ${tags.slice(0, 40).join(", ")}${tags.length > 40 ? ", …" : ""}`,
    );
  }
  // The document itself, not its parsed model, so that every field this code does not know stays.
  const document = JSON.parse(text) as { spec: { tags: Array<Record<string, unknown>> } };
  const replaced: ReplacedTag[] = [];
  for (const replacement of options.replacements) {
    const entry = document.spec.tags.find((t) => t.name === replacement.tag)!;
    const from = entry.from as { name: string };
    if (from.name !== replacement.pullspec) {
      replaced.push({ tag: replacement.tag, from: from.name, to: replacement.pullspec });
    }
    from.name = replacement.pullspec;
    const annotations = { ...(entry.annotations as Record<string, string> | null | undefined) };
    if (replacement.commit) annotations[COMMIT] = replacement.commit;
    if (replacement.sourceLocation) annotations[SOURCE] = replacement.sourceLocation;
    if (Object.keys(annotations).length > 0) entry.annotations = annotations;
  }
  const changed = new Map<string, ImageFile>();
  if (replaced.length === 0) return { changed, replaced };
  const indent = /^\{\n(\s+)"/.exec(text)?.[1] ?? "";
  changed.set(IMAGE_REFERENCES_FILE, {
    ...original,
    bytes: Buffer.from(JSON.stringify(document, null, indent) + (text.endsWith("\n") ? "\n" : "")),
  });
  for (const [name, file] of options.files) {
    if (name === IMAGE_REFERENCES_FILE) continue;
    let bytes = file.bytes;
    for (const { from, to } of replaced) bytes = replaceBytes(bytes, Buffer.from(from), Buffer.from(to));
    if (bytes !== file.bytes) changed.set(name, { ...file, bytes });
  }
  return { changed, replaced };
}
