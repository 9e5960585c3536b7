/** Directories deep an artifact path may be, and the length of each name and of the whole path. */
export const ARTIFACT_PATH_LIMITS = { depth: 16, segment: 255, total: 1024 } as const;

// Control characters (NUL included) name no file a reader should download.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A path a pod gave for one of its artifacts, checked before anything is written: relative, made of
 * plain names (no "", ".", ".." or backslash), no control characters, bounded depth and length.
 * Returns the reason when it is refused.
 */
export function safeArtifactPath(
  path: string,
): { ok: true; segments: string[] } | { ok: false; reason: string } {
  const refuse = (why: string) => ({
    ok: false as const,
    reason: `refused path ${JSON.stringify(path.slice(0, 200))}: ${why}`,
  });
  if (path.length === 0) return refuse("it is empty");
  if (path.length > ARTIFACT_PATH_LIMITS.total)
    return refuse(`longer than ${ARTIFACT_PATH_LIMITS.total} characters`);
  if (CONTROL.test(path)) return refuse("it contains a control character");
  if (path.startsWith("/")) return refuse("it is absolute");
  if (path.includes("\\")) return refuse("it contains a backslash");
  const segments = path.split("/");
  if (segments.length > ARTIFACT_PATH_LIMITS.depth)
    return refuse(`deeper than ${ARTIFACT_PATH_LIMITS.depth} directories`);
  for (const segment of segments) {
    if (segment === "" || segment === "." || segment === "..")
      return refuse(`it has a "${segment}" name in it`);
    if (Buffer.byteLength(segment) > ARTIFACT_PATH_LIMITS.segment)
      return refuse(`a name in it is longer than ${ARTIFACT_PATH_LIMITS.segment} bytes`);
  }
  return { ok: true, segments };
}
