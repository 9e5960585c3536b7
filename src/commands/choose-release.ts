import type { AllowedReleases } from "./allowed-releases.ts";
import { RELEASE_PULLSPEC } from "./command.ts";

/** Which release a selector names: the latest of a stream, or an image of a release repository. */
export type ReleaseChoice = { kind: "stream"; stream: string } | { kind: "pullspec"; pullspec: string };

/**
 * The release a selector (`upgrade-from=…`) names, when the operator allows it: a stream by its
 * listed name, or a pullspec (tag or digest) of a listed release repository. Anything else —
 * another registry, another repository, a stream nobody listed — is undefined: never installed.
 */
export function chooseRelease(selector: string, allowed: AllowedReleases): ReleaseChoice | undefined {
  const stream = allowed.streams.find((s) => s.name === selector);
  if (stream) return { kind: "stream", stream: stream.stream };
  if (!RELEASE_PULLSPEC.test(selector)) return undefined;
  const repository = selector
    .replace(/@sha256:[a-f0-9]{64}$/, "")
    .replace(/:[^/:]+$/, "")
    .toLowerCase();
  return allowed.repositories.some((r) => r.toLowerCase() === repository)
    ? { kind: "pullspec", pullspec: selector }
    : undefined;
}
