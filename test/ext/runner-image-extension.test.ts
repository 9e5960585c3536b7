import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EXTENSION_NAME } from "@netstress/network-extension/extension-info.ts";
import { loadExtensionImageStreams } from "../../src/payload/extension-image-streams.ts";
import { conventionalPath, DEFAULT_TEST_BINARY_REGISTRY } from "../../src/payload/test-binary-registry.ts";

const IMAGESTREAM = fileURLToPath(
  new URL(
    "../../packages/network-extension/deploy/netstress-network-tests.imagestream.yaml",
    import.meta.url,
  ),
);
const CONTAINERFILE = fileURLToPath(new URL("../../deploy/Containerfile", import.meta.url));

describe("the runner image's extension is discovered like any other", () => {
  it("is named by an annotated ImageStream tag whose binary path is where the image installs it", async () => {
    const [extension, ...others] = await loadExtensionImageStreams(IMAGESTREAM);
    expect(others).toEqual([]);
    expect(extension).toMatchObject({
      component: EXTENSION_NAME,
      pullspec: expect.stringMatching(/^quay\.io\/netstress\/network-stress-bot@sha256:[a-f0-9]{64}$/),
      binaryPath: "/usr/bin/netstress-network-tests-ext.gz",
      binaryArgs: [],
    });
    // As a payload component it would be found by convention, under the tag netstress-network.
    expect(conventionalPath(DEFAULT_TEST_BINARY_REGISTRY, "netstress-network")).toBe(extension!.binaryPath);
    const containerfile = await readFile(CONTAINERFILE, "utf8");
    expect(containerfile).toMatch(
      new RegExp(
        `^COPY --from=build \\S+/netstress-network-tests-ext\\.gz ${extension!.binaryPath.replaceAll(".", "\\.")}$`,
        "m",
      ),
    );
  });
});
