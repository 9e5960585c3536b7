import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildImage,
  buildIndex,
  buildLayer,
  toBlob,
  writeOciLayout,
  type Blob,
} from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { createRegistry, type RegistryOptions } from "../../src/registry/create-registry.ts";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-layout-"));
});
afterAll(() => rm(work, { recursive: true, force: true }));

const GZIP_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip";

/** Writes a one-image layout whose only layer is `layer`, and looks for `path` in it. */
async function lookUp(layer: Blob, path = "/usr/bin/a-tests-ext.gz", options: RegistryOptions = {}) {
  const dir = await mkdtemp(join(work, "layout-"));
  await writeOciLayout({
    dir,
    images: [{ name: "img", image: buildImage({ arch: "amd64", layers: [layer] }) }],
  });
  const registry = await createRegistry({ cacheDir: await mkdtemp(join(work, "cache-")), ...options });
  const image = await registry.resolveImage({ reference: `oci:${dir}:img`, arch: "amd64" });
  return { dir, found: await registry.findFile({ image, path }) };
}

describe("OCI image layouts", () => {
  it("works wherever a registry reference does: by name, by digest, and as the only image", async () => {
    const dir = await mkdtemp(join(work, "layout-"));
    const perArch = async (arch: string) =>
      buildImage({ arch, layers: [await buildLayer([{ path: "usr/bin/a-tests-ext.gz", content: arch }])] });
    const index = buildIndex([await perArch("amd64"), await perArch("ppc64le")]);
    await writeOciLayout({ dir, images: [{ name: "release", image: index }] });
    const registry = await createRegistry({ cacheDir: await mkdtemp(join(work, "cache-")) });
    for (const reference of [`oci:${dir}:release`, `oci:${dir}@${index.manifest.digest}`, `oci:${dir}`]) {
      const image = await registry.resolveImage({ reference, arch: "ppc64le" });
      expect(image.indexDigest).toBe(index.manifest.digest);
      const found = await registry.findFile({ image, path: "usr/bin/a-tests-ext.gz" });
      expect(found).toMatchObject({ found: true, size: "ppc64le".length });
    }
    await expect(registry.resolveImage({ reference: `oci:${dir}:nightly`, arch: "amd64" })).rejects.toThrow(
      /no image named "nightly" in the layout; it has release/,
    );
  });

  it("says when a directory is not a layout", async () => {
    const registry = await createRegistry({ cacheDir: await mkdtemp(join(work, "cache-")) });
    await expect(registry.resolveImage({ reference: `oci:${work}/nowhere`, arch: "amd64" })).rejects.toThrow(
      /is not an OCI image layout/,
    );
  });
});

describe("bad layers are refused with a clear error", () => {
  it("a layer whose bytes do not match its digest", async () => {
    const layer = await buildLayer([{ path: "usr/bin/a-tests-ext.gz", content: "genuine" }]);
    const dir = await mkdtemp(join(work, "layout-"));
    await writeOciLayout({
      dir,
      images: [{ name: "img", image: buildImage({ arch: "amd64", layers: [layer] }) }],
    });
    const tampered = await buildLayer([{ path: "usr/bin/a-tests-ext.gz", content: "evil!!!" }]);
    await writeFile(join(dir, "blobs", "sha256", layer.digest.slice(7)), tampered.bytes);
    const registry = await createRegistry({ cacheDir: await mkdtemp(join(work, "cache-")) });
    const image = await registry.resolveImage({ reference: `oci:${dir}:img`, arch: "amd64" });
    await expect(registry.findFile({ image, path: "/usr/bin/a-tests-ext.gz" })).rejects.toMatchObject({
      code: "digest-mismatch",
      message: expect.stringMatching(/content has digest sha256:\w+ .* but sha256:\w+ was expected/),
    });
  });

  it("a layer that is not gzip at all", async () => {
    await expect(
      lookUp(toBlob(GZIP_LAYER, Buffer.from("this is not gzip data at all"))),
    ).rejects.toMatchObject({
      code: "corrupt-layer",
      message: expect.stringMatching(/not a valid gzip-compressed tar: incorrect header check/),
    });
  });

  it("a truncated gzip layer", async () => {
    const whole = await buildLayer([
      { path: "usr/bin/a-tests-ext.gz", content: "x".repeat(50_000) + Math.random() },
    ]);
    await expect(
      lookUp(toBlob(GZIP_LAYER, whole.bytes.subarray(0, whole.bytes.length >> 1))),
    ).rejects.toMatchObject({
      code: "corrupt-layer",
      message: expect.stringMatching(/unexpected end of file/),
    });
  });

  it("a gzip bomb: decompression stops at the cap", async () => {
    const bomb = toBlob(GZIP_LAYER, gzipSync(Buffer.alloc(16 * 1024 * 1024)));
    expect(bomb.size).toBeLessThan(32 * 1024);
    const started = Date.now();
    await expect(lookUp(bomb, "/x", { maxLayerBytes: 1024 * 1024 })).rejects.toMatchObject({
      code: "too-large",
      message: expect.stringMatching(/decompresses to more than 1048576 bytes/),
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a file above the size limit", async () => {
    const layer = await buildLayer([{ path: "usr/bin/a-tests-ext.gz", content: "y".repeat(4096) }]);
    await expect(lookUp(layer, "/usr/bin/a-tests-ext.gz", { maxFileBytes: 1000 })).rejects.toMatchObject({
      code: "too-large",
    });
  });

  it("a tar entry that climbs out of the image root", async () => {
    const layer = await buildLayer([
      { path: "usr/bin/a-tests-ext.gz", content: "fine" },
      { path: "../../etc/cron.d/evil", content: "* * * * * root rm -rf /" },
    ]);
    await expect(lookUp(layer)).rejects.toMatchObject({
      code: "unsafe-path",
      message: expect.stringMatching(/entry "\.\.\/\.\.\/etc\/cron\.d\/evil" escapes the image root/),
    });
  });

  it("symlinks resolve inside the image root, never outside it", async () => {
    const layer = await buildLayer([
      { path: "usr/bin/a-tests-ext.gz", type: "symlink", linkname: "../../../../opt/real" },
      { path: "opt/real", content: "inside" },
    ]);
    expect((await lookUp(layer)).found).toMatchObject({ found: true, size: "inside".length });
  });
});
