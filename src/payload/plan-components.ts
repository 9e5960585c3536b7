import type { BinarySource } from "../runner/result-record.ts";
import type { ReleaseImageReferences, ReleaseTag } from "./image-references.ts";
import type { Overrides } from "./overrides.ts";
import { testBinaryPath, type TestBinaryRegistry } from "./test-binary-registry.ts";

/** A component before its image is read: which image to look in, and why that one. */
export interface ComponentCandidate {
  tag: string;
  image: string;
  binaryPath: string;
  source: BinarySource;
  commit: string | null;
  sourceLocation: string | null;
}

const differs = (pr: ReleaseTag, baseline: ReleaseTag | undefined) =>
  !baseline || pr.digest !== baseline.digest || (pr.commit ?? "") !== (baseline.commit ?? "");

/**
 * Decides, for every test-carrying tag, whether its binary comes from the PR (an override) or
 * from the released payload. With a baseline payload, a tag whose digest or commit differs from
 * the baseline is the PR's; explicit overrides win over both. Pure: no image is read here.
 */
export function planComponents(options: {
  release: ReleaseImageReferences;
  registry: TestBinaryRegistry;
  overrides?: Overrides;
  baseline?: ReleaseImageReferences;
}): ComponentCandidate[] {
  const overrides = options.overrides ?? new Map<string, string>();
  const byTag = new Map(options.release.tags.map((t) => [t.tag, t]));
  const baselineByTag = options.baseline ? new Map(options.baseline.tags.map((t) => [t.tag, t])) : undefined;
  const tags = [...new Set([...options.registry.components.map((c) => c.tag), ...overrides.keys()])];

  return tags.flatMap((tag): ComponentCandidate[] => {
    const binaryPath = testBinaryPath(options.registry, tag);
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
        },
      ];
    }
    if (!released) {
      // Components of other releases (or other products) are simply not part of this payload.
      return [];
    }
    const source: BinarySource =
      baselineByTag && differs(released, baselineByTag.get(tag)) ? "override" : "released";
    return [
      {
        tag,
        image: released.pullspec,
        binaryPath,
        source,
        commit: released.commit,
        sourceLocation: released.sourceLocation,
      },
    ];
  });
}
