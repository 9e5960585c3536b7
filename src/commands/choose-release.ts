import { RELEASE_PULLSPEC } from "./command.ts";

/** A release stream of the release-controller an operator lists, under a short name of its own (or its own name). */
export interface ReleaseStream {
  /** What commenters and repositories write, e.g. 4.19. */
  name: string;
  /** The release-controller's stream, e.g. 4.19.0-0.nightly. */
  stream: string;
}

/**
 * The releases a run may be asked to install besides its own payload (an upgrade's start): the
 * operator's release streams, and release images of the operator's release repositories.
 */
export interface AllowedReleases {
  /** Registry repositories (`host/path`, no tag) whose images are releases, e.g. quay.io/openshift-release-dev/ocp-release. */
  repositories: readonly string[];
  streams: readonly ReleaseStream[];
}

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
