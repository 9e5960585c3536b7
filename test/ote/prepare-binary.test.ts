import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { elfArch } from "../../src/ote/elf-arch.ts";
import { prepareBinary } from "../../src/ote/prepare-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

/** The first 64 bytes of a little-endian ELF64 executable for the given e_machine. */
function elfHeader(machine: number): Buffer {
  const header = Buffer.alloc(64);
  header.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  header.writeUInt16LE(2, 16);
  header.writeUInt16LE(machine, 18);
  return header;
}

describe("elfArch", () => {
  it("names the architectures OpenShift ships", () => {
    expect(elfArch(elfHeader(0x3e))).toBe("amd64");
    expect(elfArch(elfHeader(0xb7))).toBe("arm64");
    expect(elfArch(elfHeader(0x15))).toBe("ppc64le");
    expect(elfArch(elfHeader(0x16))).toBe("s390x");
  });

  it("says nothing about files that are not ELF", () => {
    expect(elfArch(Buffer.from("#!/usr/bin/env node\n".padEnd(64)))).toBeUndefined();
  });
});

describe("prepareBinary", () => {
  it("unpacks a gzipped binary into the cache and makes it executable", async () => {
    const gz = join(dir.path, "sdn-tests-ext.gz");
    await writeFile(gz, gzipSync("#!/bin/sh\necho hi\n"));
    const prepared = await prepareBinary({ path: gz, cacheDir: join(dir.path, "cache") });
    expect(prepared.path).not.toBe(gz);
    expect(await readFile(prepared.path, "utf8")).toBe("#!/bin/sh\necho hi\n");
    expect((await stat(prepared.path)).mode & 0o111).toBe(0o111);
    expect(prepared.sha256).toMatch(/^[0-9a-f]{64}$/);
    const again = await prepareBinary({ path: gz, cacheDir: join(dir.path, "cache") });
    expect(again.path).toBe(prepared.path);
  });

  it("refuses an ELF binary of another architecture, naming both", async () => {
    const foreign =
      hostArch() === "arm64" ? { machine: 0x3e, arch: "amd64" } : { machine: 0xb7, arch: "arm64" };
    const path = join(dir.path, "foreign-tests-ext");
    await writeFile(path, elfHeader(foreign.machine));
    await expect(prepareBinary({ path, cacheDir: join(dir.path, "cache") })).rejects.toThrow(
      new RegExp(`built for ${foreign.arch} but this run is for ${hostArch()}`),
    );
  });

  it("accepts an ELF binary of the run's architecture", async () => {
    const path = join(dir.path, "native-tests-ext");
    await writeFile(path, elfHeader(0x16));
    const prepared = await prepareBinary({ path, cacheDir: join(dir.path, "cache"), arch: "s390x" });
    expect(prepared.elfArch).toBe("s390x");
  });

  it("says the gzip is corrupt instead of crashing, and leaves no partial file", async () => {
    const gz = join(dir.path, "broken-tests-ext.gz");
    await writeFile(gz, gzipSync("#!/bin/sh\n".repeat(1000)).subarray(0, 40));
    await expect(prepareBinary({ path: gz, cacheDir: join(dir.path, "cache-broken") })).rejects.toThrow(
      /cannot unpack test binary .*broken-tests-ext\.gz/,
    );
    expect(await readdir(join(dir.path, "cache-broken"))).toEqual([]);
  });

  it("stops a gzip bomb at the decompressed size limit", async () => {
    const gz = join(dir.path, "bomb-tests-ext.gz");
    await writeFile(gz, gzipSync(Buffer.alloc(64 * 1024 * 1024)));
    await expect(
      prepareBinary({ path: gz, cacheDir: join(dir.path, "cache-bomb"), maxBytes: 1024 * 1024 }),
    ).rejects.toThrow(/decompressed size exceeds 1048576 bytes/);
  });

  it("names a missing binary", async () => {
    await expect(prepareBinary({ path: join(dir.path, "nope"), cacheDir: dir.path })).rejects.toThrow(
      /does not exist or cannot be read/,
    );
  });
});
