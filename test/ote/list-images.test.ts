import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listImages } from "../../src/ote/list-images.ts";
import { fixtureInfo, writeProtocolFixture } from "../helpers/protocol-fixture-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const GINKGO_EXT = fileURLToPath(
  new URL("../../packages/testbed/src/ginkgo-ext/ginkgo-tests-ext.mjs", import.meta.url),
);

let dir: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("<bin> images", () => {
  it("reads a Ginkgo-built extension's list, mappings included", async () => {
    expect(await listImages({ binary: GINKGO_EXT })).toEqual([
      { index: 0, registry: "quay.io/openshift/community-e2e-images", name: "agnhost", version: "2.53" },
      expect.objectContaining({
        index: 1,
        name: "nginx",
        mapped: expect.objectContaining({ name: "e2e-1-registry-k8s-io-e2e-test-images-nginx-1-15-4" }),
      }),
    ]);
  });

  it("reads null, as the framework prints an extension without images, as none", async () => {
    const binary = await writeProtocolFixture(join(dir.path, "no-images-tests-ext"), {
      info: fixtureInfo("none"),
      listLines: [],
      images: null,
    });
    expect(await listImages({ binary })).toEqual([]);
  });

  it("says how a binary without the command ended, with its last word", async () => {
    const binary = await writeProtocolFixture(join(dir.path, "old-tests-ext"), {
      info: fixtureInfo("old"),
      listLines: [],
    });
    await expect(listImages({ binary })).rejects.toThrow(
      `${binary} images failed: the binary exited with code 1 (unknown command images)`,
    );
  });
});
