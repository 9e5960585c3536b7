import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildImage, buildIndex, buildLayer } from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { createRegistry, type Registry } from "../../src/registry/create-registry.ts";
import { loadCredentials } from "../../src/registry/registry-credentials.ts";
import { RegistryError } from "../../src/registry/registry-error.ts";
import { pushImage } from "../helpers/oci-push-image.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";

let server: RegistryServer;
let work: string;

/** A registry client over a fetch that counts what it sends, with a fresh cache directory. */
async function countingRegistry(options: { cacheDir?: string } = {}) {
  const requests: string[] = [];
  const countingFetch: typeof fetch = (input, init) => {
    requests.push(String(input));
    return fetch(input, init);
  };
  const registry = await createRegistry({
    cacheDir: options.cacheDir ?? (await mkdtemp(join(work, "cache-"))),
    client: createDistributionClient({ fetch: countingFetch }),
  });
  return { registry, requests };
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-registry-test-"));
  server = await startRegistry();
  const base = await buildLayer([
    { path: "usr/", type: "directory" },
    { path: "usr/bin/", type: "directory" },
    { path: "usr/bin/tool-tests-ext.gz", content: "old" },
    { path: "usr/bin/removed", content: "gone soon" },
    { path: "etc/app/", type: "directory" },
    { path: "etc/app/config", content: "lower" },
  ]);
  const perArch = async (arch: string, variant?: string) =>
    buildImage({
      arch,
      ...(variant ? { variant } : {}),
      labels: { "io.openshift.build.commit.id": `commit-${arch}` },
      layers: [
        base,
        await buildLayer([
          { path: "usr/bin/tool-tests-ext.gz", content: `new-${arch}` },
          { path: "usr/bin/.wh.removed" },
          { path: "etc/app/.wh..wh..opq" },
          { path: "bin", type: "symlink", linkname: "usr/bin" },
        ]),
      ],
    });
  const amd64 = await perArch("amd64");
  const arm64 = await perArch("arm64", "v8");
  const s390x = await perArch("s390x");
  await pushImage({
    url: server.url,
    repository: "team/tool",
    tag: "multi",
    image: buildIndex([amd64, arm64]),
  });
  await pushImage({
    url: server.url,
    repository: "team/tool",
    tag: "list",
    image: buildIndex([amd64, s390x], { flavour: "docker" }),
  });
  await pushImage({ url: server.url, repository: "team/tool", tag: "s390x-only", image: s390x });
});

afterAll(async () => {
  await server?.stop();
  await rm(work, { recursive: true, force: true });
});

async function fileText(
  registry: Registry,
  reference: string,
  arch: "amd64" | "arm64" | "s390x",
  path: string,
) {
  const image = await registry.resolveImage({ reference, arch });
  const found = await registry.findFile({ image, path });
  return found.found ? await readFile(found.path, "utf8") : `missing: ${found.reason}`;
}

describe("registry client against a real docker-registry", () => {
  it("picks each arch from an OCI index and a Docker manifest list, reading the topmost layer's file", async () => {
    const { registry } = await countingRegistry();
    expect(
      await fileText(registry, `${server.host}/team/tool:multi`, "amd64", "/usr/bin/tool-tests-ext.gz"),
    ).toBe("new-amd64");
    expect(
      await fileText(registry, `${server.host}/team/tool:multi`, "arm64", "/usr/bin/tool-tests-ext.gz"),
    ).toBe("new-arm64");
    expect(
      await fileText(registry, `${server.host}/team/tool:list`, "s390x", "usr/bin/tool-tests-ext.gz"),
    ).toBe("new-s390x");
  });

  it("says which platforms an index offers when the arch is not among them", async () => {
    const { registry } = await countingRegistry();
    await expect(
      registry.resolveImage({ reference: `${server.host}/team/tool:multi`, arch: "ppc64le" }),
    ).rejects.toThrow(/no linux\/ppc64le image; it offers linux\/amd64, linux\/arm64\/v8/);
  });

  it("refuses a single-arch image of another arch, naming both arches", async () => {
    const { registry } = await countingRegistry();
    const attempt = registry.resolveImage({
      reference: `${server.host}/team/tool:s390x-only`,
      arch: "amd64",
    });
    await expect(attempt).rejects.toMatchObject({ code: "platform-mismatch" });
    await expect(attempt).rejects.toThrow(/single-arch image for linux\/s390x, not linux\/amd64/);
  });

  it("honours whiteouts, opaque directories and symlinked directories", async () => {
    const { registry } = await countingRegistry();
    const ref = `${server.host}/team/tool:multi`;
    expect(await fileText(registry, ref, "amd64", "/usr/bin/removed")).toMatch(
      /missing: .*deleted by usr\/bin\/\.wh\.removed/,
    );
    expect(await fileText(registry, ref, "amd64", "/etc/app/config")).toMatch(
      /missing: .*deleted by etc\/app\/\.wh\.\.wh\.\.opq/,
    );
    expect(await fileText(registry, ref, "amd64", "/bin/tool-tests-ext.gz")).toBe("new-amd64");
    expect(await fileText(registry, ref, "amd64", "/usr/bin/nothing-here")).toMatch(
      /missing: \/usr\/bin\/nothing-here is not in any of the 2 layers/,
    );
  });

  it("serves everything pinned by digest from the cache on the second run, without a single request", async () => {
    const cacheDir = await mkdtemp(join(work, "cache-"));
    const cold = await countingRegistry({ cacheDir });
    const image = await cold.registry.resolveImage({
      reference: `${server.host}/team/tool:multi`,
      arch: "arm64",
    });
    const pinned = `${server.host}/team/tool@${image.indexDigest}`;
    expect(await fileText(cold.registry, pinned, "arm64", "/usr/bin/tool-tests-ext.gz")).toBe("new-arm64");
    expect(cold.requests.length).toBeGreaterThan(0);
    await cold.registry.settled();

    const warm = await countingRegistry({ cacheDir });
    expect(await fileText(warm.registry, pinned, "arm64", "/usr/bin/tool-tests-ext.gz")).toBe("new-arm64");
    expect(warm.requests).toEqual([]);
  });

  it("reads a base layer shared by images once for all their paths in a directory, and again only for a file's content", async () => {
    const shared = await buildLayer([
      { path: "usr/", type: "directory" },
      { path: "usr/bin/", type: "directory" },
      { path: "usr/bin/bash", content: "shell" },
      { path: "usr/bin/old-tests-ext.gz", content: "old binary" },
    ]);
    const refs = await Promise.all(
      ["one", "two", "three"].map(async (name) => {
        const image = buildImage({
          arch: "amd64",
          layers: [shared, await buildLayer([{ path: `opt/${name}`, content: name }])],
        });
        await pushImage({ url: server.url, repository: `team/${name}`, tag: "v1", image });
        return `${server.host}/team/${name}:v1`;
      }),
    );
    const cacheDir = await mkdtemp(join(work, "cache-"));
    const baseReads = (requests: string[]) => requests.filter((r) => r.endsWith(`/blobs/${shared.digest}`));
    const first = await countingRegistry({ cacheDir });
    const absent = await Promise.all(
      refs.slice(0, 2).map((ref, i) => fileText(first.registry, ref, "amd64", `/usr/bin/c${i}-tests-ext.gz`)),
    );
    expect(absent).toEqual([
      expect.stringMatching(/missing: \/usr\/bin\/c0-tests-ext\.gz is not in any of the 2 layers/),
      expect.stringMatching(/missing: \/usr\/bin\/c1-tests-ext\.gz is not in any of the 2 layers/),
    ]);
    expect(baseReads(first.requests)).toHaveLength(1);
    await first.registry.settled();

    const later = await countingRegistry({ cacheDir });
    expect(await fileText(later.registry, refs[2]!, "amd64", "/usr/bin/c2-tests-ext.gz")).toMatch(/^missing/);
    expect(baseReads(later.requests)).toEqual([]);
    expect(await fileText(later.registry, refs[2]!, "amd64", "/usr/bin/old-tests-ext.gz")).toBe("old binary");
    expect(baseReads(later.requests)).toHaveLength(1);
  });

  it("reports a missing repository or tag as not found", async () => {
    const { registry } = await countingRegistry();
    const attempt = registry.resolveImage({ reference: `${server.host}/team/absent:v1`, arch: "amd64" });
    await expect(attempt).rejects.toBeInstanceOf(RegistryError);
    await expect(attempt).rejects.toMatchObject({ code: "not-found" });
  });
});

describe("a registry with htpasswd authentication", () => {
  let secured: RegistryServer;
  const auth = { username: "puller", password: "s3cret-pass" };

  beforeAll(async () => {
    secured = await startRegistry({ auth });
    const image = buildImage({
      arch: "amd64",
      layers: [await buildLayer([{ path: "usr/bin/x-tests-ext.gz", content: "x" }])],
    });
    await pushImage({ url: secured.url, repository: "private/x", tag: "v1", image, auth });
  });
  afterAll(() => secured?.stop());

  const authFile = async (username: string, password: string) => {
    const path = join(work, `auth-${username}-${password}.json`);
    const entry = { auth: Buffer.from(`${username}:${password}`).toString("base64") };
    await writeFile(path, JSON.stringify({ auths: { [secured.host]: entry } }));
    return path;
  };

  it("pulls with the credentials of the REGISTRY_AUTH_FILE pull secret", async () => {
    const credentials = await loadCredentials({
      env: { REGISTRY_AUTH_FILE: await authFile(auth.username, auth.password) },
    });
    const registry = await createRegistry({ cacheDir: await mkdtemp(join(work, "cache-")), credentials });
    expect(await fileText(registry, `${secured.host}/private/x:v1`, "amd64", "/usr/bin/x-tests-ext.gz")).toBe(
      "x",
    );
  });

  it("says credentials are needed when it has none", async () => {
    const registry = await createRegistry({
      cacheDir: await mkdtemp(join(work, "cache-")),
      credentials: () => undefined,
    });
    const attempt = registry.resolveImage({ reference: `${secured.host}/private/x:v1`, arch: "amd64" });
    await expect(attempt).rejects.toMatchObject({ code: "unauthorized" });
    await expect(attempt).rejects.toThrow(/requires credentials and none were found/);
  });

  it("says the credentials were rejected when the password is wrong", async () => {
    const credentials = await loadCredentials({
      env: { REGISTRY_AUTH_FILE: await authFile(auth.username, "wrong") },
    });
    const registry = await createRegistry({ cacheDir: await mkdtemp(join(work, "cache-")), credentials });
    await expect(
      registry.resolveImage({ reference: `${secured.host}/private/x:v1`, arch: "amd64" }),
    ).rejects.toThrow(/rejected the credentials/);
  });
});
