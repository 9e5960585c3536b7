import type { AllowedReleases } from "./allowed-releases.ts";

/** What a release selector may be, in words for a reply: the listed streams and release repositories. */
export function describeAllowedReleases(allowed: AllowedReleases): string {
  const streams = allowed.streams.map((s) => (s.name === s.stream ? s.name : `${s.name} (${s.stream})`));
  const parts = [
    ...(streams.length > 0 ? [`a release stream: ${streams.join(", ")}`] : []),
    ...(allowed.repositories.length > 0
      ? [`a release image (tag or sha256 digest) of ${allowed.repositories.join(", ")}`]
      : []),
  ];
  return parts.length > 0
    ? parts.join("; or ")
    : "nothing: this bot's operator lists no release streams or repositories";
}
