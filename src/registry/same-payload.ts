import { parseImageReference } from "./image-reference.ts";

/** The digest a pullspec names (`sha256:…`); undefined for a tag or text that is not a pullspec. */
export function payloadDigest(pullspec: string): string | undefined {
  try {
    return parseImageReference(pullspec).digest;
  } catch {
    return undefined;
  }
}

/** Two pullspecs name the same payload when their digests agree (the repository may differ). */
export function samePayload(a: string, b: string): boolean {
  const left = payloadDigest(a);
  return left !== undefined && left === payloadDigest(b);
}
