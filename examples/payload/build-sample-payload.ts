import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Arch } from "../../src/arch/arch.ts";
import { buildSampleBinaries } from "../sample-ext/build-sample-binaries.ts";
import { ovnKubernetesPr, ovnKubernetesReleased, sdnReleased } from "../sample-ext/suites.ts";
import { buildComponentImage, buildLabels, buildReleaseImage } from "./build-release-image.ts";
import { writeOciLayout } from "./oci-image-builder.ts";

export interface SamplePayload {
  /** The OCI layout holding the release image, its component images and the PR build. */
  layoutDir: string;
  /** `oci:<layout>:release`: the multi-arch release payload. */
  payload: string;
  /**
   * `oci:<layout>:pr-release`: the PR payload, the release with ovn-kubernetes pointing at the PR
   * build (what `oc adm release new --from-release` makes), for clusters that run the PR.
   */
  prPayload: string;
  /** The PR build of ovn-kubernetes, as an override: `ovn-kubernetes=oci:<layout>:pr-ovn-kubernetes`. */
  override: { tag: string; image: string };
  /** The release name in image-references. */
  releaseName: string;
}

/** Where the sample images claim to live; the layout carries them, so nothing is ever pulled from here. */
const REPOSITORY = "quay.io/netstress-sample/release-images";
const RELEASE_NAME = "4.20.0-0.netstress-sample";

/**
 * Builds a small multi-arch release payload as an OCI layout: component images holding the sample
 * OTE binaries at /usr/bin/<tag>-tests-ext.gz (ovn-kubernetes, sdn), a hyperkube image without
 * its test binary (so that the plan shows a missing one), a component without tests, a release image
 * whose release-manifests/image-references lists them all, the PR build of ovn-kubernetes, and the
 * PR payload: the same release but for ovn-kubernetes, which names the PR build.
 */
export async function buildSamplePayload(options: {
  outDir: string;
  arches?: readonly Arch[];
}): Promise<SamplePayload> {
  const arches = options.arches ?? ["amd64", "arm64"];
  const layoutDir = resolve(options.outDir);
  const scratch = await mkdtemp(join(tmpdir(), "netstress-sample-binaries-"));
  try {
    const binaries = await buildSampleBinaries({ outDir: scratch, gzip: true });
    const repo = (name: string) => `https://github.com/openshift/${name}`;
    const components = [
      {
        tag: "ovn-kubernetes",
        sourceLocation: repo("ovn-kubernetes"),
        commit: ovnKubernetesReleased.commit,
        binary: await readFile(binaries.released["ovn-kubernetes"]),
      },
      {
        tag: "sdn",
        sourceLocation: repo("sdn"),
        commit: sdnReleased.commit,
        binary: await readFile(binaries.released.sdn),
      },
      {
        tag: "hyperkube",
        sourceLocation: repo("kubernetes"),
        commit: "5d1c2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d",
      },
      { tag: "cli", sourceLocation: repo("oc"), commit: "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b" },
    ];
    const images = await Promise.all(
      components.map(async (c) => ({
        ...c,
        image: await buildComponentImage({
          arches,
          labels: buildLabels(c.commit, c.sourceLocation),
          ...(c.binary ? { binary: { path: `/usr/bin/${c.tag}-tests-ext.gz`, content: c.binary } } : {}),
        }),
      })),
    );
    const tags = images.map((c) => ({ ...c, pullspec: `${REPOSITORY}@${c.image.manifest.digest}` }));
    const release = await buildReleaseImage({ name: RELEASE_NAME, arches, tags });
    const pr = await buildComponentImage({
      arches,
      labels: buildLabels(ovnKubernetesPr.commit, repo("ovn-kubernetes")),
      binary: {
        path: "/usr/bin/ovn-kubernetes-tests-ext.gz",
        content: await readFile(binaries.pr["ovn-kubernetes"]),
      },
    });
    const prRelease = await buildReleaseImage({
      name: `${RELEASE_NAME}-pr`,
      arches,
      tags: tags.map((t) =>
        t.tag === "ovn-kubernetes"
          ? { ...t, commit: ovnKubernetesPr.commit, pullspec: `${REPOSITORY}@${pr.manifest.digest}` }
          : t,
      ),
    });
    await writeOciLayout({
      dir: layoutDir,
      images: [
        { name: "release", image: release },
        { name: "pr-release", image: prRelease },
        { name: "pr-ovn-kubernetes", image: pr },
        ...images.map((c) => ({ name: `component-${c.tag}`, image: c.image })),
      ],
    });
    return {
      layoutDir,
      payload: `oci:${layoutDir}:release`,
      prPayload: `oci:${layoutDir}:pr-release`,
      override: { tag: "ovn-kubernetes", image: `oci:${layoutDir}:pr-ovn-kubernetes` },
      releaseName: RELEASE_NAME,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

// `node --import tsx examples/payload/build-sample-payload.ts OUTDIR` prints the payload's references.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const outDir = process.argv[2];
  if (!outDir) {
    console.error("usage: build-sample-payload.ts OUTDIR");
    process.exit(2);
  }
  console.log(JSON.stringify(await buildSamplePayload({ outDir }), null, 2));
}
