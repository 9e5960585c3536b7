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
