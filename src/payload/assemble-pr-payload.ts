import pLimit from "p-limit";
import { parseArch, type Arch } from "@netstress/core/arch/arch.ts";
import { appendLayer, type ContentBlob } from "../registry/append-layer.ts";
import type { Registry } from "../registry/create-registry.ts";
import { sha256Digest, verifyDigest } from "../registry/digest.ts";
import type { DistributionClient, RawManifest, RequestOptions } from "../registry/distribution-client.ts";
import { readBody } from "../registry/http-attempt.ts";
import {
  formatImageReference,
  parseImageReference,
  type RegistryImageReference,
} from "../registry/image-reference.ts";
import { MEDIA_TYPES, parseManifest, type Descriptor, type ImageManifest } from "../registry/manifest.ts";
import { packLayer } from "../registry/pack-layer.ts";
import { readImageDirectory } from "../registry/read-image-directory.ts";
import { PayloadError } from "./payload-error.ts";
import { rewriteReleaseManifests, type TagReplacement } from "./rewrite-release-manifests.ts";

/** A PR payload ready to install: pinned by digest, with each arch's image. */
export interface PrPayload {
  /** `<repository>@sha256:…`: the index when the base is one, else the single image. */
  pullspec: string;
  digest: string;
  /** Each arch's release image digest. */
  perArch: Partial<Record<Arch, string>>;
  /** The PR's tags and the images, pinned by digest, the payload points them at. */
  images: Record<string, string>;
}

export interface AssemblePrPayloadOptions {
  /** The base release image (a registry reference; an index gives an index). */
  base: string;
  /** Payload tag → the PR's image for it. */
  overrides: ReadonlyMap<string, string>;
  /** Where the payload is pushed: a repository, no tag or digest (`quay.io/org/pr-payloads`). */
  targetRepository: string;
  /** Reads the PR images (their digests, arches and labels), through the cache. */
  registry: Registry;
  /** Reads the base and pushes the payload. */
  client: DistributionClient;
  /** Also tags the payload (it is always pushed by digest). */
  tag?: string;
  signal?: AbortSignal;
  /** Decompressed size at which a base layer is refused. */
  maxLayerBytes?: number;
}

const MANIFESTS_DIR = "release-manifests";
const MAX_MANIFESTS_BYTES = 512 * 1024 * 1024;
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
const LAYER_TYPE: Record<string, string> = {
  [MEDIA_TYPES.dockerManifest]: "application/vnd.docker.image.rootfs.diff.tar.gzip",
  [MEDIA_TYPES.ociManifest]: "application/vnd.oci.image.layer.v1.tar+gzip",
};

/**
 * Assembles a PR payload the way `oc adm release new --from-release BASE TAG=IMAGE…` does: per
 * arch of the base, its layers (mounted when the target is on the same registry) plus one layer
 * with the release manifests that change — image-references pointing the PR's tags at the PR's
 * images, pinned by digest, and every manifest naming a replaced pullspec — pushed by digest to
 * the target repository, under an index when the base is one. The same inputs give the same digest.
 */
export async function assemblePrPayload(options: AssemblePrPayloadOptions): Promise<PrPayload> {
  const base = registryReference(options.base, "--from-release (the base release)");
  const target = registryReference(options.targetRepository, "the PR payload repository");
  // A bare repository parses with tag "latest": only a tag or digest written in the name is wrong.
  if (/[:@]/.test(options.targetRepository.slice(options.targetRepository.lastIndexOf("/") + 1))) {
    throw new PayloadError(
      "pr-payload-unusable",
      `the PR payload repository ${options.targetRepository} names a tag or digest; give the repository alone (the payload is pushed by digest)`,
    );
  }
  if (options.overrides.size === 0) {
    throw new PayloadError(
      "pr-payload-unusable",
      "no TAG=IMAGE given: a PR payload replaces at least one image",
    );
  }
  const repository: RegistryImageReference = {
    kind: "registry",
    registry: target.registry,
    repository: target.repository,
  };
  const request: RequestOptions = options.signal ? { signal: options.signal } : {};
  const { client } = options;
  const mountFrom = base.registry === repository.registry ? base.repository : undefined;
  const limit = pLimit(4);

  const prRegistry = options.registry.withBudget(options.signal ? { signal: options.signal } : {});
  const top = base.digest
    ? await fetchManifest(client, base, request)
    : await client.getManifest(base, request);
  const parsed = parseManifest({
    bytes: top.bytes,
    mediaType: top.mediaType,
    what: `manifest of ${options.base}`,
  });
  const images =
    parsed.kind === "index"
      ? parsed.manifests.flatMap((entry) => {
          const arch = platformArch(entry);
          return arch ? [{ arch, descriptor: entry as Descriptor | undefined }] : [];
        })
      : [{ arch: undefined as Arch | undefined, descriptor: undefined as Descriptor | undefined }];
  if (images.length === 0) {
    throw new PayloadError(
      "pr-payload-unusable",
      `${options.base} is an index without a linux image of a known arch`,
    );
  }

  const assembled = await Promise.all(
    images.map(async ({ arch, descriptor }) => {
      const raw = descriptor
        ? await fetchManifest(client, { ...base, digest: descriptor.digest }, request)
        : top;
      const name = descriptor
        ? `${formatImageReference({ ...base, digest: descriptor.digest })}`
        : options.base;
      const manifest = parseManifest({
        bytes: raw.bytes,
        mediaType: descriptor?.mediaType ?? raw.mediaType,
        what: `manifest of ${name}`,
      });
      if (manifest.kind !== "image") {
        throw new PayloadError("pr-payload-unusable", `${name}: nested indexes are not supported`);
      }
      const configBytes = await readConfigBytes(client, base, manifest, name, request);
      const imageArch =
        arch ??
        parseArch((JSON.parse(configBytes.toString("utf8")) as { architecture: string }).architecture);
      // Everything is read and checked before anything is written: bad input leaves the target alone.
      const [replacements, files] = await Promise.all([
        prImages({ registry: prRegistry, overrides: options.overrides, arch: imageArch }),
        readImageDirectory({
          layers: manifest.layers,
          open: (layer) => client.openBlob(base, layer.digest, request),
          dir: MANIFESTS_DIR,
          maxDecompressedBytes: options.maxLayerBytes ?? 2 * 1024 ** 3,
          maxBytes: MAX_MANIFESTS_BYTES,
          what: `/${MANIFESTS_DIR} of ${name}`,
        }),
      ]);
      const { changed, replaced } = rewriteReleaseManifests({ files, replacements, source: options.base });
      const layer = await packLayer({
        files: changed,
        mediaType: LAYER_TYPE[manifest.mediaType] ?? LAYER_TYPE[MEDIA_TYPES.ociManifest]!,
      });
      const image = appendLayer({
        manifest: { mediaType: manifest.mediaType, bytes: raw.bytes },
        config: { mediaType: manifest.config.mediaType, bytes: configBytes },
        layer,
        createdBy: `netstress payload assemble --from-release ${options.base} ${replaced.map((r) => `${r.tag}=${r.to}`).join(" ")}`,
        what: name,
      });
      await Promise.all([
        ...manifest.layers.map((lower) =>
          limit(() =>
            client.pushBlob(
              repository,
              {
                digest: lower.digest,
                size: lower.size,
                content: () => client.openBlob(base, lower.digest, request),
              },
              { ...request, ...(mountFrom ? { mountFrom } : {}) },
            ),
          ),
        ),
        ...[layer, image.config].map((blob) =>
          limit(() => client.pushBlob(repository, { ...blob, content: blob.bytes }, request)),
        ),
      ]);
      await client.putManifest({ ...repository, digest: image.manifest.digest }, image.manifest, request);
      return { arch: imageArch, descriptor, manifest: image.manifest, replacements };
    }),
  );

  let payload: ContentBlob;
  if (parsed.kind === "index") {
    payload = rewriteIndex(top, new Map(assembled.map((a) => [a.descriptor!.digest, a.manifest])));
    await client.putManifest({ ...repository, digest: payload.digest }, payload, request);
  } else {
    payload = assembled[0]!.manifest;
  }
  if (options.tag) await client.putManifest({ ...repository, tag: options.tag }, payload, request);
  return {
    pullspec: `${repository.registry}/${repository.repository}@${payload.digest}`,
    digest: payload.digest,
    perArch: Object.fromEntries(assembled.map((a) => [a.arch, a.manifest.digest])),
    images: Object.fromEntries(assembled[0]!.replacements.map((r) => [r.tag, r.pullspec])),
  };
}

function registryReference(text: string, what: string): RegistryImageReference {
  const ref = parseImageReference(text);
  if (ref.kind !== "registry") {
    throw new PayloadError(
      "pr-payload-unusable",
      `${what} ${text} is an OCI layout; a PR payload is assembled from and pushed to registries (push the layout first, e.g. skopeo copy)`,
    );
  }
  return ref;
}

/** The arch of an index entry for a linux image, or nothing (other platforms, attestations). */
function platformArch(entry: Descriptor): Arch | undefined {
  if (entry.platform?.os !== "linux") return undefined;
  try {
    return parseArch(entry.platform.architecture);
  } catch {
    return undefined;
  }
}

async function fetchManifest(
  client: DistributionClient,
  ref: RegistryImageReference,
  request: RequestOptions,
): Promise<RawManifest> {
  const raw = await client.getManifest(ref, request);
  verifyDigest({ bytes: raw.bytes, expected: ref.digest!, what: `manifest of ${formatImageReference(ref)}` });
  return raw;
}

async function readConfigBytes(
  client: DistributionClient,
  base: RegistryImageReference,
  manifest: ImageManifest,
  name: string,
  request: RequestOptions,
): Promise<Buffer> {
  const what = `image config of ${name}`;
  const bytes = await readBody({
    body: await client.openBlob(base, manifest.config.digest, request),
    maxBytes: MAX_CONFIG_BYTES,
    what,
  });
  verifyDigest({ bytes, expected: manifest.config.digest, what });
  return bytes;
}

/**
 * Each PR image for one arch: pinned by the digest the pullspec names (the index of a multi-arch
 * image, as release payloads pin them), with its commit and repository from the labels. An image
 * without that arch is refused: the payload would install nothing for it.
 */
async function prImages(options: {
  registry: Registry;
  overrides: ReadonlyMap<string, string>;
  arch: Arch;
}): Promise<TagReplacement[]> {
  return Promise.all(
    [...options.overrides].map(async ([tag, pullspec]) => {
      const image = await options.registry.resolveImage({ reference: pullspec, arch: options.arch });
      if (image.reference.kind !== "registry") {
        throw new PayloadError(
          "pr-payload-unusable",
          `${tag}=${pullspec}: the PR's image is an OCI layout; a payload can only point at registry images`,
        );
      }
      const { labels } = await options.registry.readConfig(image);
      const { registry, repository } = image.reference;
      return {
        tag,
        pullspec: `${registry}/${repository}@${image.indexDigest ?? image.digest}`,
        commit: labels["io.openshift.build.commit.id"] ?? null,
        sourceLocation: labels["io.openshift.build.source-location"] ?? null,
      };
    }),
  );
}

/** The base index over the assembled images: entries of other platforms (attestations…) are dropped. */
function rewriteIndex(top: RawManifest, assembled: ReadonlyMap<string, ContentBlob>): ContentBlob {
  const index = JSON.parse(top.bytes.toString("utf8")) as { mediaType?: string; manifests: Descriptor[] };
  const manifests = index.manifests.flatMap((entry) => {
    const image = assembled.get(entry.digest);
    return image ? [{ ...entry, digest: image.digest, size: image.size }] : [];
  });
  const bytes = Buffer.from(JSON.stringify({ ...index, manifests }));
  return {
    mediaType: index.mediaType ?? top.mediaType,
    digest: sha256Digest(bytes),
    size: bytes.length,
    bytes,
  };
}
