import pLimit from "p-limit";
import {
  buildComponentImage,
  buildLabels,
  buildReleaseImage,
  type ReleaseTagSpec,
} from "@netstress/testbed/sample-payload/build-release-image.ts";
import { pushImage } from "./oci-push-image.ts";

export interface PayloadComponentSpec {
  tag: string;
  /** File content at `binaryPath` (default /usr/bin/<tag>-tests-ext.gz); none means no test binary. */
  binary?: string | Uint8Array;
  binaryPath?: string;
  commit?: string;
  /** Arches the component image offers (default: the payload's). */
  arches?: readonly string[];
  /** Leave the image out of the registry, so that the payload points at something missing. */
  unpushed?: boolean;
}

/**
 * Builds a multi-arch release payload from component specs and pushes it all to a registry:
 * components as `<repository>:component-<tag>` (referenced by digest, as real payloads do) and the
 * release as `<repository>:<releaseTag>`. Builds are deterministic: equal specs, equal digests.
 */
export async function pushPayload(options: {
  url: string;
  host: string;
  repository: string;
  name: string;
  arches: readonly string[];
  components: readonly PayloadComponentSpec[];
  releaseTag?: string;
  document?: object;
  /** More release manifests, given each tag's pullspec (tag → pullspec). */
  manifests?: (pullspecs: ReadonlyMap<string, string>) => Record<string, string>;
}): Promise<{ payload: string; digest: string; pullspecs: Map<string, string> }> {
  const limit = pLimit(8);
  const tags = await Promise.all(
    options.components.map((spec) =>
      limit(async (): Promise<ReleaseTagSpec> => {
        const commit = spec.commit ?? `${spec.tag}-commit`.padEnd(40, "0");
        const sourceLocation = `https://github.com/openshift/${spec.tag}`;
        const image = await buildComponentImage({
          arches: spec.arches ?? options.arches,
          labels: buildLabels(commit, sourceLocation),
          ...(spec.binary !== undefined
            ? {
                binary: {
                  path: spec.binaryPath ?? `/usr/bin/${spec.tag}-tests-ext.gz`,
                  content: typeof spec.binary === "string" ? Buffer.from(spec.binary) : spec.binary,
                },
              }
            : {}),
        });
        if (!spec.unpushed) {
          await pushImage({
            url: options.url,
            repository: options.repository,
            tag: `component-${spec.tag}`,
            image,
          });
        }
        return {
          tag: spec.tag,
          commit,
          sourceLocation,
          pullspec: `${options.host}/${options.repository}@${image.manifest.digest}`,
        };
      }),
    ),
  );
  const release = await buildReleaseImage({
    name: options.name,
    arches: options.arches,
    tags,
    ...(options.document ? { document: options.document } : {}),
    ...(options.manifests
      ? { manifests: options.manifests(new Map(tags.map((t) => [t.tag, t.pullspec]))) }
      : {}),
  });
  const releaseTag = options.releaseTag ?? "release";
  await pushImage({ url: options.url, repository: options.repository, tag: releaseTag, image: release });
  return {
    payload: `${options.host}/${options.repository}:${releaseTag}`,
    digest: release.manifest.digest,
    pullspecs: new Map(tags.map((t) => [t.tag, t.pullspec])),
  };
}
