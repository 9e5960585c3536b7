import type { ReleaseImageReferences, ReleaseTag } from "./image-references.ts";

/** One component as a payload lists it, with a link to its commit when the source is on the web. */
export interface ComponentVersion {
  pullspec: string;
  digest: string | null;
  commit: string | null;
  sourceLocation: string | null;
  /** `<source-location>/commit/<id>`, when both are known and the location is an http(s) URL. */
  commitUrl: string | null;
}

/** A component whose image or commit differs between two payloads (or that only one lists). */
export interface ComponentChange {
  tag: string;
  kind: "added" | "removed" | "changed";
  from: ComponentVersion | null;
  to: ComponentVersion | null;
  /** The image digest differs (a rebuild counts, even of the same commit). */
  digestChanged: boolean;
  /** Both commits are known and they differ. */
  commitChanged: boolean;
  /** `<source-location>/compare/<from>...<to>`, when both commits are known and come from one repository. */
  compareUrl: string | null;
}

export interface PayloadChanges {
  from: string;
  to: string;
  /** Sorted by tag. */
  changes: ComponentChange[];
  /** Components listed in both payloads with the same image and commit. */
  unchanged: number;
}

/** A web address of the source repository, or null (a javascript: or ssh location gets no link). */
function repositoryUrl(sourceLocation: string | null): string | null {
  if (!sourceLocation) return null;
  try {
    const url = new URL(sourceLocation);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href.replace(/\/+$/, "") : null;
  } catch {
    return null;
  }
}

const COMMIT = /^[0-9a-f]{7,64}$/i;

function version(tag: ReleaseTag): ComponentVersion {
  const repository = repositoryUrl(tag.sourceLocation);
  return {
    pullspec: tag.pullspec,
    digest: tag.digest,
    commit: tag.commit,
    sourceLocation: tag.sourceLocation,
    commitUrl:
      repository && tag.commit && COMMIT.test(tag.commit) ? `${repository}/commit/${tag.commit}` : null,
  };
}

/**
 * What changed between two payloads: per component tag of `release-manifests/image-references`,
 * whether its image digest or its build commit (`io.openshift.build.commit.id`) differ, with links
 * through its source location (`io.openshift.build.source-location`).
 */
export function diffPayloads(input: {
  from: ReleaseImageReferences;
  to: ReleaseImageReferences;
}): PayloadChanges {
  const before = new Map(input.from.tags.map((tag) => [tag.tag, tag]));
  const after = new Map(input.to.tags.map((tag) => [tag.tag, tag]));
  const tags = [...new Set([...before.keys(), ...after.keys()])].sort();
  const changes: ComponentChange[] = [];
  let unchanged = 0;
  for (const tag of tags) {
    const old = before.get(tag);
    const now = after.get(tag);
    const from = old ? version(old) : null;
    const to = now ? version(now) : null;
    // Without digests (a tag pinned by name), the pullspec is what can differ.
    const digestChanged = !!from && !!to && (from.digest ?? from.pullspec) !== (to.digest ?? to.pullspec);
    const commitChanged = !!from?.commit && !!to?.commit && from.commit !== to.commit;
    if (from && to && !digestChanged && !commitChanged) {
      unchanged++;
      continue;
    }
    const repository = repositoryUrl(to?.sourceLocation ?? null);
    const sameRepository = repository !== null && repository === repositoryUrl(from?.sourceLocation ?? null);
    changes.push({
      tag,
      kind: !from ? "added" : !to ? "removed" : "changed",
      from,
      to,
      digestChanged,
      commitChanged,
      compareUrl:
        commitChanged && sameRepository && from?.commitUrl && to?.commitUrl
          ? `${repository}/compare/${from.commit}...${to.commit}`
          : null,
    });
  }
  return { from: input.from.name, to: input.to.name, changes, unchanged };
}
