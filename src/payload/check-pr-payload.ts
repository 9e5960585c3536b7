import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Registry } from "../registry/create-registry.ts";
import { parseImageReference } from "../registry/image-reference.ts";
import type { PrPayload } from "./assemble-pr-payload.ts";
import { PayloadError } from "./payload-error.ts";
import { readRelease } from "./read-release.ts";

/**
 * Accepts a PR payload that CI published (the repository's `pr_payload`) only when, on every arch
 * asked for, its image-references point each of the PR's tags at the PR's image for that tag (the
 * same digest: the image's index, or its image for the arch). Anything else is refused with what
 * differs and how to fix it; a payload that passes is returned pinned by digest.
 */
export async function checkPrPayload(options: {
  payload: string;
  /** Payload tag → the PR's image for it. */
  overrides: ReadonlyMap<string, string>;
  arches: readonly Arch[];
  registry: Registry;
}): Promise<PrPayload> {
  const { registry, payload } = options;
  if (options.arches.length === 0) {
    throw new PayloadError("pr-payload-unusable", `no arch to check the PR payload ${payload} on`);
  }
  const perArch: Partial<Record<Arch, string>> = {};
  const problems: string[] = [];
  let top: string | undefined;
  const images: Record<string, string> = {};
  for (const arch of options.arches) {
    const release = await readRelease({ registry, reference: payload, arch });
    perArch[arch] = release.image.digest;
    top = release.identity.digest;
    const byTag = new Map(release.references.tags.map((t) => [t.tag, t]));
    for (const [tag, pullspec] of options.overrides) {
      const image = await registry.resolveImage({ reference: pullspec, arch });
      const wanted = [image.indexDigest, image.digest].filter((d) => d !== undefined);
      const listed = byTag.get(tag);
      if (!listed) {
        problems.push(`${arch}: it has no tag ${tag}, which the PR builds (${pullspec})`);
      } else if (!listed.digest || !wanted.includes(listed.digest)) {
        problems.push(
          `${arch}: tag ${tag} points at ${listed.pullspec}, not at the PR's image ${pullspec} (${wanted[0]})`,
        );
      } else {
        images[tag] = listed.pullspec;
      }
    }
  }
  if (problems.length > 0) {
    throw new PayloadError(
      "pr-payload-mismatch",
      `the PR payload ${payload} does not carry the PR's images:\n  ${problems.join("\n  ")}\n` +
        "Build it from the PR's images (oc adm release new --from-release BASE TAG=IMAGE…), or remove pr_payload from the repository configuration so that the bot assembles it",
    );
  }
  const ref = parseImageReference(payload);
  const name = ref.kind === "registry" ? `${ref.registry}/${ref.repository}` : `oci:${ref.dir}`;
  return {
    pullspec: `${name}@${top!}`,
    digest: top!,
    perArch,
    images,
  };
}
