import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildImage,
  buildIndex,
  buildLayer,
  toBlob,
} from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { sha256Digest } from "../../src/registry/digest.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { parseImageReference, type RegistryImageReference } from "../../src/registry/image-reference.ts";
import { MEDIA_TYPES } from "../../src/registry/manifest.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";

let server: RegistryServer;

beforeAll(async () => {
  server = await startRegistry();
});
afterAll(() => server?.stop());

const repo = (name: string) => parseImageReference(`${server.host}/${name}`) as RegistryImageReference;

/** A client over a fetch that records the method and path (with query) of every request. */
function recordingClient(options: { uploadChunkBytes?: number; retries?: number } = {}) {
  const requests: string[] = [];
  const client = createDistributionClient({
    fetch: (input, init) => {
      const url = new URL(String(input));
      requests.push(`${init?.method ?? "GET"} ${url.pathname}${url.search}`);
      return fetch(input, init);
    },
    retry: { retries: options.retries ?? 0, backoffMs: 1 },
    ...(options.uploadChunkBytes ? { uploadChunkBytes: options.uploadChunkBytes } : {}),
  });
  return { client, requests };
}

async function readBlob(name: string, digest: string): Promise<Buffer> {
  const response = await fetch(`${server.url}/v2/${name}/blobs/${digest}`);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe("pushing to a real docker-registry", () => {
  it("uploads a small blob in one PUT and a large one in PATCHed chunks, and the registry serves both back", async () => {
    const { client, requests } = recordingClient({ uploadChunkBytes: 64 * 1024 });
    const small = randomBytes(1000);
    const large = randomBytes(200 * 1024 + 17);
    const ref = repo("push/blobs");
    expect(
      await client.pushBlob(ref, { digest: sha256Digest(small), size: small.length, content: small }),
    ).toBe("uploaded");
    expect(
      await client.pushBlob(ref, {
        digest: sha256Digest(large),
        size: large.length,
        content: async () => Readable.from([large.subarray(0, 5000), large.subarray(5000)]),
      }),
    ).toBe("uploaded");
    expect(await readBlob("push/blobs", sha256Digest(small))).toEqual(small);
    expect(await readBlob("push/blobs", sha256Digest(large))).toEqual(large);
    const patches = requests.filter((r) => r.startsWith("PATCH "));
    expect(patches).toHaveLength(4); // 3 full chunks of 64 KiB and the rest
    expect(requests.filter((r) => r.startsWith("PUT ") && r.includes("digest="))).toHaveLength(2);

    // A blob the repository has is not sent again.
    requests.length = 0;
    expect(
      await client.pushBlob(ref, { digest: sha256Digest(small), size: small.length, content: small }),
    ).toBe("exists");
    expect(requests).toEqual([`HEAD /v2/push/blobs/blobs/${sha256Digest(small)}`]);
  });

  it("uploads a blob pushed by several images at once a single time", async () => {
    const { client, requests } = recordingClient();
    const layer = randomBytes(4000);
    const blob = { digest: sha256Digest(layer), size: layer.length, content: layer };
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () => client.pushBlob(repo("push/shared"), blob)),
    );
    expect(outcomes.sort()).toEqual(["exists", "exists", "exists", "exists", "exists", "uploaded"]);
    expect(requests.filter((r) => r.startsWith("POST "))).toHaveLength(1);
    expect(await readBlob("push/shared", blob.digest)).toEqual(layer);
  });

  it("mounts a blob from another repository of the same registry instead of sending it", async () => {
    const { client, requests } = recordingClient();
    const bytes = randomBytes(4096);
    const digest = sha256Digest(bytes);
    await client.pushBlob(repo("push/source"), { digest, size: bytes.length, content: bytes });
    requests.length = 0;
    const outcome = await client.pushBlob(
      repo("push/target"),
      {
        digest,
        size: bytes.length,
        content: () => Promise.reject(new Error("a mounted blob is never read")),
      },
      { mountFrom: "push/source" },
    );
    expect(outcome).toBe("mounted");
    expect(requests).toEqual([
      `HEAD /v2/push/target/blobs/${digest}`,
      `POST /v2/push/target/blobs/uploads/?mount=${encodeURIComponent(digest)}&from=push%2Fsource`,
    ]);
    expect(await readBlob("push/target", digest)).toEqual(bytes);
  });

  it("puts manifests by digest and by tag, an index over them, and reads them back", async () => {
    const { client } = recordingClient();
    const layer = await buildLayer([{ path: "etc/hello", content: "hi" }]);
    const amd64 = buildImage({ arch: "amd64", layers: [layer] });
    const arm64 = buildImage({ arch: "arm64", variant: "v8", layers: [layer] });
    const index = buildIndex([amd64, arm64]);
    const ref = repo("push/image");
    for (const blob of [...amd64.blobs, ...arm64.blobs])
      await client.pushBlob(ref, { ...blob, content: blob.bytes });
    for (const child of index.children) {
      expect(await client.putManifest({ ...ref, digest: child.digest }, child)).toBe(child.digest);
    }
    expect(await client.putManifest({ ...ref, tag: "v1" }, index.manifest)).toBe(index.manifest.digest);
    const served = await client.getManifest({ ...ref, tag: "v1" });
    expect(served.digest).toBe(index.manifest.digest);
    expect(served.bytes).toEqual(index.manifest.bytes);
  });

  it("refuses content that does not hash to its digest, before or as it is sent", async () => {
    const { client } = recordingClient();
    const bytes = Buffer.from("what it claims to be");
    const wrong = sha256Digest(Buffer.from("something else"));
    await expect(
      client.pushBlob(repo("push/bad"), { digest: wrong, size: bytes.length, content: bytes }),
    ).rejects.toMatchObject({ code: "digest-mismatch" });
    await expect(
      client.pushBlob(repo("push/bad"), {
        digest: wrong,
        size: bytes.length,
        content: async () => Readable.from([bytes]),
      }),
    ).rejects.toMatchObject({ code: "digest-mismatch" });
    await expect(
      client.putManifest(
        { ...repo("push/bad"), digest: wrong },
        { mediaType: MEDIA_TYPES.ociManifest, bytes: toBlob("x", bytes).bytes },
      ),
    ).rejects.toThrow(/hashes to sha256:[0-9a-f]{64}, not to the sha256:/);
  });

  it("says a manifest naming blobs the repository lacks was refused, with the registry's error code", async () => {
    const { client } = recordingClient();
    const image = buildImage({ arch: "amd64", layers: [await buildLayer([{ path: "x", content: "x" }])] });
    await expect(client.putManifest({ ...repo("push/empty"), tag: "v1" }, image.manifest)).rejects.toThrow(
      /refused it \(HTTP 400, MANIFEST_BLOB_UNKNOWN/,
    );
  });
});

describe("pushing where pushes cannot go", () => {
  it("says the credentials are missing for a registry that demands them", async () => {
    const secured = await startRegistry({ auth: { username: "pusher", password: "pw-123456" } });
    try {
      const client = createDistributionClient({ credentials: () => undefined, retry: { retries: 0 } });
      const bytes = Buffer.from("blob");
      await expect(
        client.pushBlob(parseImageReference(`${secured.host}/team/x`) as RegistryImageReference, {
          digest: sha256Digest(bytes),
          size: bytes.length,
          content: bytes,
        }),
      ).rejects.toMatchObject({
        code: "unauthorized",
        message: expect.stringMatching(/requires credentials/),
      });
    } finally {
      await secured.stop();
    }
  });

  it("says pushes are denied by a read-only registry", async () => {
    const readOnly = await startRegistry({ readOnly: true });
    try {
      const client = createDistributionClient({ retry: { retries: 0 } });
      const bytes = Buffer.from("blob");
      await expect(
        client.pushBlob(parseImageReference(`${readOnly.host}/team/x`) as RegistryImageReference, {
          digest: sha256Digest(bytes),
          size: bytes.length,
          content: bytes,
        }),
      ).rejects.toThrow(/does not accept pushes \(405 Method Not Allowed/);
    } finally {
      await readOnly.stop();
    }
  });
});
