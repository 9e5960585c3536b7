import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { buildSampleBinaries, writeSampleBinary } from "../sample-ext/build-sample-binaries.ts";
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
  /**
   * `oci:<layout>:rebuilt-release`: the release with ovn-kubernetes rebuilt from its released commit
   * (another build date, so another binary and digest), as a PR payload that changes nothing there.
   */
  rebuiltPayload: string;
  /**
   * `oci:<layout>:dirty-release`: as rebuiltPayload, but that ovn-kubernetes binary was built from
   * a dirty work tree; its image labels still name the released commit.
   */
  dirtyPayload: string;
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
    const withOvn = (name: string, image: typeof pr, commit: string) =>
      buildReleaseImage({
        name,
        arches,
        tags: tags.map((t) =>
          t.tag === "ovn-kubernetes"
            ? { ...t, commit, pullspec: `${REPOSITORY}@${image.manifest.digest}` }
            : t,
        ),
      });
    const prRelease = await withOvn(`${RELEASE_NAME}-pr`, pr, ovnKubernetesPr.commit);
    // Rebuilds of the released ovn-kubernetes commit: a clean one, and one from a dirty tree.
    const rebuild = async (name: string, gitTreeState: string) => {
      const path = await writeSampleBinary({
        suite: { ...ovnKubernetesReleased, buildDate: "2026-11-29T09:00:00Z", gitTreeState },
        path: join(scratch, `${name}-ovn-kubernetes-tests-ext.gz`),
        gzip: true,
      });
      const image = await buildComponentImage({
        arches,
        labels: buildLabels(ovnKubernetesReleased.commit, repo("ovn-kubernetes")),
        binary: { path: "/usr/bin/ovn-kubernetes-tests-ext.gz", content: await readFile(path) },
      });
      return {
        image,
        release: await withOvn(`${RELEASE_NAME}-${name}`, image, ovnKubernetesReleased.commit),
      };
    };
    const rebuilt = await rebuild("rebuilt", "clean");
    const dirty = await rebuild("dirty", "dirty");
    await writeOciLayout({
      dir: layoutDir,
      images: [
        { name: "release", image: release },
        { name: "pr-release", image: prRelease },
        { name: "pr-ovn-kubernetes", image: pr },
        { name: "rebuilt-release", image: rebuilt.release },
        { name: "rebuilt-ovn-kubernetes", image: rebuilt.image },
        { name: "dirty-release", image: dirty.release },
        { name: "dirty-ovn-kubernetes", image: dirty.image },
        ...images.map((c) => ({ name: `component-${c.tag}`, image: c.image })),
      ],
    });
    return {
      layoutDir,
      payload: `oci:${layoutDir}:release`,
      prPayload: `oci:${layoutDir}:pr-release`,
      override: { tag: "ovn-kubernetes", image: `oci:${layoutDir}:pr-ovn-kubernetes` },
      rebuiltPayload: `oci:${layoutDir}:rebuilt-release`,
      dirtyPayload: `oci:${layoutDir}:dirty-release`,
      releaseName: RELEASE_NAME,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

// `node --import tsx packages/testbed/src/sample-payload/build-sample-payload.ts OUTDIR` prints the payload's references.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const outDir = process.argv[2];
  if (!outDir) {
    console.error("usage: build-sample-payload.ts OUTDIR");
    process.exit(2);
  }
  console.log(JSON.stringify(await buildSamplePayload({ outDir }), null, 2));
}
