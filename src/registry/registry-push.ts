import { Readable } from "node:stream";
import { z } from "zod";
import { createDigestVerifier, sha256Digest, sha256Hex, verifyDigest } from "./digest.ts";
import type { HttpResponse } from "./http-attempt.ts";
import { formatImageReference, type RegistryImageReference } from "./image-reference.ts";
import type { RegistryRequests, RequestOptions } from "./registry-requests.ts";
import { RegistryError } from "./registry-error.ts";

/** Content to upload: bytes at hand, or a stream opened (again, on a retry) when it is needed. */
export interface BlobContent {
  digest: string;
  size: number;
  content: Buffer | (() => Promise<Readable>);
}

/** How a blob came to be in the repository: it was there, the registry mounted it, or it was sent. */
export type BlobPushOutcome = "exists" | "mounted" | "uploaded";

/** Writing a repository: blobs and manifests. */
export interface RegistryPush {
  /**
   * Puts a blob in the repository unless it is there: mounted from `mountFrom` (another repository
   * of the same registry) when the registry agrees, else uploaded, in one PUT up to the chunk size
   * and in PATCHed chunks above it. What goes out is checked against the digest and size.
   */
  pushBlob(
    ref: RegistryImageReference,
    blob: BlobContent,
    options?: RequestOptions & { mountFrom?: string },
  ): Promise<BlobPushOutcome>;
  /** Puts a manifest under the reference's tag, or its digest; returns the digest of the bytes. */
  putManifest(
    ref: RegistryImageReference,
    manifest: { mediaType: string; bytes: Buffer },
    options?: RequestOptions,
  ): Promise<string>;
}

/** Error codes of the distribution spec (`{"errors":[{"code":"DIGEST_INVALID",…}]}`): all of a body we repeat. */
const errorBodySchema = z.looseObject({
  errors: z.array(z.looseObject({ code: z.string().regex(/^[A-Z_]{1,40}$/) })).max(10),
});

/** A push the registry did not take: what it means and what to do, with the spec's error codes. */
async function pushRefused(response: HttpResponse, ref: RegistryImageReference, what: string) {
  const text = await response.bytes(64 * 1024).catch(() => Buffer.alloc(0));
  let codes: string[] = [];
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(text.toString("utf8")));
    if (parsed.success) codes = parsed.data.errors.map((e) => e.code);
  } catch {
    // Not the spec's error body: the status says enough.
  }
  const said = codes.length > 0 ? `, ${codes.join(", ")}` : "";
  const repository = `${ref.registry}/${ref.repository}`;
  switch (response.status) {
    case 403:
      return new RegistryError(
        "forbidden",
        `${what}: push denied (403 Forbidden${said}); the credentials for ${repository} lack push rights (give them write access, or configure another repository)`,
      );
    case 404:
      return new RegistryError(
        "not-found",
        `${what}: ${repository} does not exist or takes no pushes (404${said}); create the repository first`,
      );
    case 405:
      return new RegistryError(
        "refused",
        `${what}: ${ref.registry} does not accept pushes (405 Method Not Allowed${said}); is it read-only or a mirror?`,
      );
    default:
      return new RegistryError(
        codes.includes("DIGEST_INVALID") ? "digest-mismatch" : "bad-response",
        `${what}: ${ref.registry} refused it (HTTP ${response.status}${said})`,
      );
  }
}

/** The stream in pieces of `size` bytes (the last one shorter): a chunked upload's PATCHes. */
async function* chunksOf(stream: Readable, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let length = 0;
  for await (const piece of stream as AsyncIterable<Buffer>) {
    pending.push(piece);
    length += piece.length;
    while (length >= size) {
      const all = Buffer.concat(pending);
      yield all.subarray(0, size);
      pending = [all.subarray(size)];
      length -= size;
    }
  }
  if (length > 0) yield Buffer.concat(pending);
}

/**
 * The writing half of the distribution API: blob uploads (mounted when the registry agrees, in one
 * PUT or PATCHed chunks, checked against their digest as they go, one at a time per repository and
 * digest) and manifests; uploads follow the registry's Location on its own host only.
 */
export function createRegistryPush(
  requests: RegistryRequests,
  { uploadChunkBytes }: { uploadChunkBytes: number },
): RegistryPush {
  /** Blob pushes under way, by registry/repository@digest. */
  const blobPushes = new Map<string, Promise<BlobPushOutcome>>();

  /** Where an upload goes next: the registry's Location, on the registry's own host only (it gets our credentials). */
  function uploadLocation(response: HttpResponse, ref: RegistryImageReference, what: string): URL {
    const base = requests.baseUrl(ref.registry);
    const location = URL.parse(response.headers.get("location") ?? "", base);
    if (!location) throw new RegistryError("bad-response", `${what}: the registry gave no upload location`);
    if (location.origin !== new URL(base).origin) {
      throw new RegistryError(
        "refused",
        `${what}: the registry sends the upload to ${location.origin}; uploads go to the registry itself only`,
      );
    }
    return location;
  }

  async function uploadBlob(
    ref: RegistryImageReference,
    blob: BlobContent,
    mountFrom: string | undefined,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<BlobPushOutcome> {
    const head = await requests.authorized(
      ref,
      { method: "HEAD", path: `blobs/${blob.digest}` },
      what,
      signal,
    );
    head.discard();
    if (head.status === 200) return "exists";
    if (head.status !== 404) throw await pushRefused(head, ref, what);
    const mount = mountFrom
      ? `?mount=${encodeURIComponent(blob.digest)}&from=${encodeURIComponent(mountFrom)}`
      : "";
    const start = await requests.authorized(
      ref,
      { method: "POST", path: `blobs/uploads/${mount}`, headers: { "content-length": "0" } },
      what,
      signal,
    );
    if (mountFrom && start.status === 201) {
      start.discard();
      return "mounted";
    }
    if (start.status !== 202) throw await pushRefused(start, ref, what);
    start.discard();
    // The registry may ask for larger chunks than ours (OCI-Chunk-Min-Length).
    const chunkBytes = Math.max(uploadChunkBytes, Number(start.headers.get("oci-chunk-min-length")) || 0);
    let location = uploadLocation(start, ref, what);
    // Bytes at hand are checked before they go; a stream as it goes, failing the request at its end.
    let body: Buffer | Readable;
    if (Buffer.isBuffer(blob.content)) {
      verifyDigest({ bytes: blob.content, expected: blob.digest, what });
      body = blob.content;
    } else {
      const source = await blob.content();
      const verifier = createDigestVerifier({ expected: blob.digest, size: blob.size, what });
      source.once("error", (error) => verifier.destroy(error));
      body = source.pipe(verifier);
    }
    const stream = body instanceof Readable ? body : undefined;
    const send = async (
      method: string,
      url: URL,
      headers: Record<string, string>,
      content?: Buffer | Readable,
    ) => {
      try {
        return await requests.authorized(
          ref,
          {
            method,
            url: url.toString(),
            headers,
            ...(content !== undefined ? { body: () => content } : {}),
          },
          what,
          signal,
        );
      } catch (error) {
        // The content failing its digest is what went wrong, not the connection it broke.
        const broken: unknown = stream?.errored;
        throw broken instanceof RegistryError ? broken : error;
      }
    };
    const finish = (url: URL) => {
      url.searchParams.set("digest", blob.digest);
      return url;
    };
    let done: HttpResponse;
    try {
      if (blob.size <= chunkBytes) {
        done = await send(
          "PUT",
          finish(location),
          { "content-type": "application/octet-stream", "content-length": String(blob.size) },
          body,
        );
      } else {
        let offset = 0;
        for await (const chunk of chunksOf(stream ?? Readable.from([body]), chunkBytes)) {
          const patched = await send(
            "PATCH",
            location,
            {
              "content-type": "application/octet-stream",
              "content-length": String(chunk.length),
              "content-range": `${offset}-${offset + chunk.length - 1}`,
            },
            chunk,
          );
          if (patched.status !== 202) throw await pushRefused(patched, ref, what);
          patched.discard();
          location = uploadLocation(patched, ref, what);
          offset += chunk.length;
        }
        done = await send("PUT", finish(location), { "content-length": "0" });
      }
    } finally {
      // A failed upload lets go of its source (a blob being read from another registry holds a request slot).
      stream?.destroy();
    }
    if (done.status !== 201) throw await pushRefused(done, ref, what);
    done.discard();
    return "uploaded";
  }

  return {
    pushBlob(ref, blob, { signal, mountFrom } = {}) {
      const what = `push of blob ${blob.digest} to ${ref.registry}/${ref.repository}`;
      sha256Hex(blob.digest);
      // One push of a blob into a repository at a time: images sharing a layer (the arches of a
      // payload) would otherwise upload it at once, and distribution's filesystem storage rewrites
      // the repository's link to it in place, so that a manifest checked meanwhile is refused.
      const key = `${ref.registry}/${ref.repository}@${blob.digest}`;
      const pending = blobPushes.get(key);
      if (pending) return pending.then((outcome) => (outcome === "uploaded" ? "exists" : outcome));
      // Mounting works within one registry: from another, the content has to travel.
      const from = mountFrom && mountFrom !== ref.repository ? mountFrom : undefined;
      const push = (async () => {
        const release = await requests.acquireSlot();
        try {
          return await requests.withRetries(() => uploadBlob(ref, blob, from, what, signal), signal);
        } finally {
          release();
        }
      })();
      blobPushes.set(key, push);
      void push.then(
        () => blobPushes.delete(key),
        () => blobPushes.delete(key),
      );
      return push;
    },

    async putManifest(ref, manifest, { signal } = {}) {
      const digest = sha256Digest(manifest.bytes);
      const what = `push of manifest ${digest} to ${formatImageReference(ref)}`;
      if (ref.digest && ref.digest !== digest) {
        throw new RegistryError(
          "digest-mismatch",
          `${what}: the manifest hashes to ${digest}, not to the ${ref.digest} it is to be pushed as`,
        );
      }
      const release = await requests.acquireSlot();
      try {
        return await requests.withRetries(async () => {
          const response = await requests.authorized(
            ref,
            {
              method: "PUT",
              path: `manifests/${ref.tag ?? digest}`,
              headers: { "content-type": manifest.mediaType },
              body: () => manifest.bytes,
            },
            what,
            signal,
          );
          if (response.status !== 201) throw await pushRefused(response, ref, what);
          response.discard();
          const stored = response.headers.get("docker-content-digest");
          if (stored && stored !== digest) {
            throw new RegistryError("digest-mismatch", `${what}: the registry stored it as ${stored}`);
          }
          return digest;
        }, signal);
      } finally {
        release();
      }
    },
  };
}
