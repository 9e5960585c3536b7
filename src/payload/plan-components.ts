import type { BinarySource } from "@netstress/core/model/result-record.ts";
import type { ExtensionImageStreamTag } from "./extension-image-streams.ts";
import type { ReleaseImageReferences, ReleaseTag } from "./image-references.ts";
import type { Overrides } from "./overrides.ts";
import { PayloadError } from "./payload-error.ts";
import type { TagFilter } from "./tag-filter.ts";
import { conventionalPath, testBinaryTable, type TestBinaryRegistry } from "./test-binary-registry.ts";

/** Why a component is looked at: the table lists it, the convention, or an ImageStream names it. */
export type DiscoveryBasis = "table" | "convention" | "imagestream";

/** A component before its image is read: which image to look in, and why that one. */
export interface ComponentCandidate {
  tag: string;
  image: string;
  binaryPath: string;
  source: BinarySource;
  commit: string | null;
  sourceLocation: string | null;
  basis: DiscoveryBasis;
  /**
   * Shown in the plan even without a binary (listed, overridden or named by an ImageStream); a tag
   * probed only by convention that has no binary is simply not a test-carrying component.
   */
  required: boolean;
  imageStreamTag?: string;
  binaryArgs?: string[];
  /** Another digest than the baseline's, built from the same source commit: run as released. */
  rebuiltFromSameSource?: boolean;
}

/**
 * How a PR payload's tag compares with the baseline's: "same" image, "changed" (another commit, or
 * no commit to tell), or "rebuilt" — another digest built from the same source commit, which
 * carries the same tests and so runs as released.
 */
function compareTags(pr: ReleaseTag, baseline: ReleaseTag | undefined): "same" | "changed" | "rebuilt" {
  if (!baseline) return "changed";
  if ((pr.commit ?? "") !== (baseline.commit ?? "")) return "changed";
  if (pr.digest === baseline.digest) return "same";
  return pr.commit ? "rebuilt" : "changed";
}

const admits = (filter: TagFilter | undefined, tag: string) =>
  !filter || (filter.include.length > 0 ? filter.include.includes(tag) : !filter.exclude.includes(tag));

/**
 * Decides which components to probe and, for each, whether its binary comes from the PR (an
 * override) or from the released payload. Every payload tag is a candidate (a team ships a binary
 * at the conventional path without editing a list), the table's tags first, in table order; the
 * table gives a listed tag's path. With a baseline payload, a tag whose commit differs from the
 * baseline (or whose digest differs without a commit to compare) is the PR's; one rebuilt from the
 * same commit is released; explicit overrides win over both. The tag filter applies to
 * payload tags, as openshift-tests applies it. Pure: no image is read here.
 */
export function planComponents(options: {
  release: ReleaseImageReferences;
  registry: TestBinaryRegistry;
  overrides?: Overrides;
  baseline?: ReleaseImageReferences;
  filter?: TagFilter;
  extensions?: readonly ExtensionImageStreamTag[];
}): ComponentCandidate[] {
  const overrides = options.overrides ?? new Map<string, string>();
  const table = testBinaryTable({ registry: options.registry, release: options.release.name });
  const byTag = new Map(options.release.tags.map((t) => [t.tag, t]));
  const baselineByTag = options.baseline ? new Map(options.baseline.tags.map((t) => [t.tag, t])) : undefined;
  const tags = [...new Set([...table.keys(), ...overrides.keys(), ...byTag.keys()])].filter((tag) =>
    admits(options.filter, tag),
  );

  const payload = tags.flatMap((tag): ComponentCandidate[] => {
    const listed = table.get(tag);
    const binaryPath = listed ?? conventionalPath(options.registry, tag);
    const basis = listed !== undefined ? "table" : "convention";
    const released = byTag.get(tag);
    const override = overrides.get(tag);
    if (override !== undefined) {
      // The PR's image; the repository is the released tag's, the commit is read from the image later.
      return [
        {
          tag,
          image: override,
          binaryPath,
          source: "override",
          commit: null,
          sourceLocation: released?.sourceLocation ?? null,
          basis,
          required: true,
        },
      ];
    }
    if (!released) {
      // Components of other releases (or other products) are simply not part of this payload.
      return [];
    }
    const comparison = baselineByTag ? compareTags(released, baselineByTag.get(tag)) : "same";
    const source: BinarySource = comparison === "changed" ? "override" : "released";
    return [
      {
        tag,
        image: released.pullspec,
        binaryPath,
        source,
        commit: released.commit,
        sourceLocation: released.sourceLocation,
        basis,
        required: listed !== undefined,
        ...(comparison === "rebuilt" ? { rebuiltFromSameSource: true } : {}),
      },
    ];
  });

  const extensions = (options.extensions ?? []).map((e): ComponentCandidate => {
    if (byTag.has(e.component) || overrides.has(e.component)) {
      throw new PayloadError(
        "invalid-extension-imagestream",
        `${e.imageStreamTag} names component ${e.component}, which is a payload tag; an extension outside the payload needs a name of its own`,
      );
    }
    return {
      tag: e.component,
      image: e.pullspec,
      binaryPath: e.binaryPath,
      source: "released",
      commit: null,
      sourceLocation: null,
      basis: "imagestream",
      required: true,
      imageStreamTag: e.imageStreamTag,
      ...(e.binaryArgs.length > 0 ? { binaryArgs: e.binaryArgs } : {}),
    };
  });
  return [...payload, ...extensions];
}
