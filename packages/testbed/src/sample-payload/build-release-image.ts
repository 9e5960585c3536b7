import type { Arch } from "@netstress/core/arch/arch.ts";
import { buildImage, buildIndex, buildLayer, type Blob, type ImageBundle } from "./oci-image-builder.ts";

export interface ReleaseTagSpec {
  tag: string;
  pullspec: string;
  commit: string;
  sourceLocation: string;
}

const baseLayer = () =>
  buildLayer([
    { path: "etc/", type: "directory" },
    { path: "etc/os-release", content: 'NAME="netstress sample base"\n' },
    { path: "usr/", type: "directory" },
    { path: "usr/bin/", type: "directory" },
  ]);

/** The labels OpenShift builds put on component images. */
export function buildLabels(commit: string, sourceLocation: string): Record<string, string> {
  return { "io.openshift.build.commit.id": commit, "io.openshift.build.source-location": sourceLocation };
}

/** A multi-arch component image; with `binary`, its top layer holds that file (e.g. a gzipped OTE binary). */
export async function buildComponentImage(options: {
  arches: readonly (Arch | string)[];
  labels: Record<string, string>;
  binary?: { path: string; content: Uint8Array };
  base?: Blob;
}): Promise<ImageBundle> {
  const base = options.base ?? (await baseLayer());
  const top = options.binary
    ? [
        await buildLayer([
          { path: options.binary.path.replace(/^\//, ""), content: options.binary.content, mode: 0o755 },
        ]),
      ]
    : [];
  return buildIndex(
    options.arches.map((arch) => buildImage({ arch, layers: [base, ...top], labels: options.labels })),
  );
}

/** `release-manifests/image-references` as `oc adm release new` writes it. */
export function imageReferencesDocument(options: { name: string; tags: readonly ReleaseTagSpec[] }): object {
  return {
    kind: "ImageStream",
    apiVersion: "image.openshift.io/v1",
    metadata: { name: options.name, creationTimestamp: "2025-01-01T00:00:00Z" },
    spec: {
      lookupPolicy: { local: false },
      tags: options.tags.map((t) => ({
        name: t.tag,
        annotations: {
          "io.openshift.build.commit.id": t.commit,
          "io.openshift.build.commit.ref": "",
          "io.openshift.build.source-location": t.sourceLocation,
        },
        from: { kind: "DockerImage", name: t.pullspec },
      })),
    },
  };
}

/**
 * A multi-arch release image: per arch, a base layer and a layer with release-manifests/. The
 * document is normally image-references; tests pass other documents to see them refused.
 */
export async function buildReleaseImage(options: {
  name: string;
  arches: readonly (Arch | string)[];
  tags: readonly ReleaseTagSpec[];
  document?: object;
  /** More files of release-manifests/ (name → content), as operators' manifests are. */
  manifests?: Record<string, string>;
}): Promise<ImageBundle> {
  const releaseLayer = await buildLayer([
    { path: "release-manifests/", type: "directory" },
    {
      path: "release-manifests/image-references",
      content: JSON.stringify(options.document ?? imageReferencesDocument(options), null, 2),
    },
    {
      path: "release-manifests/release-metadata",
      content: JSON.stringify({ kind: "cincinnati-metadata-v0", version: options.name }),
    },
    ...Object.entries(options.manifests ?? {}).map(([name, content]) => ({
      path: `release-manifests/${name}`,
      content,
    })),
  ]);
  const base = await baseLayer();
  return buildIndex(options.arches.map((arch) => buildImage({ arch, layers: [base, releaseLayer] })));
}
