import semver from "semver";

/**
 * Why moving a cluster from release `from` to release `to` would be a rollback, or undefined when
 * it is not one (or either name is not a version). Names are what a payload's image-references
 * carry ("4.22.0-0.nightly-2026-12-01-123456"). Only the version core (major.minor.patch) counts:
 * the pre-release part orders builds of one stream by date, but not builds of different streams
 * ("0.ci.test-…" sorts below "0.nightly-…" for a PR payload built on that very nightly). The
 * cluster-version operator blocks a lower version unless the update is forced, and a forced one
 * is a rollback it does not support beyond the previous z-stream release.
 */
export function releaseRollback(from: string, to: string): string | undefined {
  const [fromCore, toCore] = [from, to].map((name) => semver.parse(name));
  if (!fromCore || !toCore) return undefined;
  const core = (v: semver.SemVer) => `${v.major}.${v.minor}.${v.patch}`;
  if (semver.gte(core(toCore), core(fromCore))) return undefined;
  return `${to} is an older release than ${from}, and OpenShift does not roll a cluster back`;
}
