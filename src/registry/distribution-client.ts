import { Readable } from "node:stream";
import pLimit from "p-limit";
import { z } from "zod";
import { createDigestVerifier, sha256Digest, sha256Hex, verifyDigest } from "./digest.ts";
import { DOCKER_HUB, formatImageReference, type RegistryImageReference } from "./image-reference.ts";
import { descriptorSchema, MANIFEST_ACCEPT, MEDIA_TYPES, type Descriptor } from "./manifest.ts";
import {
  httpAttempt,
  withRetries,
  type FetchFunction,
  type HttpResponse,
  type RetryPolicy,
} from "./http-attempt.ts";
import type { EgressGuard } from "./egress-guard.ts";
import type { CredentialLookup, Credentials } from "./registry-credentials.ts";
import { RegistryError } from "./registry-error.ts";
import { parseWwwAuthenticate, type AuthChallenge } from "./www-authenticate.ts";
import { isLoopbackHost } from "../http/is-loopback-host.ts";

/** Manifest bytes as served, with the digest of exactly those bytes. */
export interface RawManifest {
  digest: string;
  mediaType: string;
  bytes: Buffer;
}

export interface DistributionClientOptions {
  fetch?: FetchFunction;
  credentials?: CredentialLookup;
  /** Idle timeout per request: no headers or no body bytes for this long fails the attempt. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Requests in flight at once (a blob being read holds its slot until it is consumed). */
  concurrency?: number;
  /** Registries spoken to over plain HTTP; by default only loopback ones (like docker's insecure localhost). */
  plainHttp?: (registry: string) => boolean;
  /** Registries that may be read at all (the bot's allow-list); by default every one. */
  allowRegistry?: (registry: string) => boolean;
  /** Checks every URL (registry, redirect, token realm) before a request goes to it. */
  guard?: EgressGuard;
  /** Blobs larger than this are uploaded in chunks of this size (or the registry's minimum). */
  uploadChunkBytes?: number;
}

/** What a caller can ask of one call: a signal that abandons it (requests, retries and body). */
export interface RequestOptions {
  signal?: AbortSignal;
}

/** Content to upload: bytes at hand, or a stream opened (again, on a retry) when it is needed. */
export interface BlobContent {
  digest: string;
  size: number;
  content: Buffer | (() => Promise<Readable>);
}

/** How a blob came to be in the repository: it was there, the registry mounted it, or it was sent. */
export type BlobPushOutcome = "exists" | "mounted" | "uploaded";

/** The OCI distribution API: manifests and blobs, read and pushed, with auth, retries and bounded concurrency. */
export interface DistributionClient {
  getManifest(ref: RegistryImageReference, options?: RequestOptions): Promise<RawManifest>;
  openBlob(ref: RegistryImageReference, digest: string, options?: RequestOptions): Promise<Readable>;
  /**
   * The manifests in the repository whose `subject` is `subject` (OCI 1.1): the referrers API, or on
   * a registry without it (distribution 2.x), the `sha256-<hex>` tag of the referrers tag schema.
   */
  listReferrers(
    ref: RegistryImageReference,
    subject: string,
    options?: RequestOptions,
  ): Promise<Descriptor[]>;
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

const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const DEFAULT_UPLOAD_CHUNK_BYTES = 32 * 1024 * 1024;
/** Error codes of the distribution spec (`{"errors":[{"code":"DIGEST_INVALID",…}]}`): all of a body we repeat. */
const errorBodySchema = z.looseObject({
  errors: z.array(z.looseObject({ code: z.string().regex(/^[A-Z_]{1,40}$/) })).max(10),
});
/** Pages of a referrers list followed at most: a registry that keeps linking is not followed forever. */
const MAX_REFERRER_PAGES = 20;
const referrersIndexSchema = z.looseObject({ manifests: z.array(descriptorSchema).default([]) });
const tokenResponseSchema = z.looseObject({
  token: z.string().optional(),
  access_token: z.string().optional(),
});

export function isLoopbackRegistry(registry: string): boolean {
  return isLoopbackHost(registry.replace(/:\d+$/, ""));
}

export function createDistributionClient(options: DistributionClientOptions = {}): DistributionClient {
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const retry: RetryPolicy = { retries: 4, backoffMs: 250, ...options.retry };
  const plainHttp = options.plainHttp ?? isLoopbackRegistry;
  const credentials = options.credentials ?? (() => undefined);
  const allowRegistry = options.allowRegistry ?? (() => true);
  const egress = { ...(options.guard ? { guard: options.guard } : {}), plainHttp };
  const limit = pLimit(options.concurrency ?? 16);
  const uploadChunkBytes = options.uploadChunkBytes ?? DEFAULT_UPLOAD_CHUNK_BYTES;
  /** Blob pushes under way, by registry/repository@digest. */
  const blobPushes = new Map<string, Promise<BlobPushOutcome>>();
  /** Authorization header per registry/repository, learned from the last challenge. */
  const authorizations = new Map<string, string>();
  /**
   * Whether a repository's registry has the referrers API, learned from the first answer (one 404 per
   * repository). Per repository, not per registry: a registry with the API answers 404 for a
   * repository that is gone, which must not turn the API off for the others.
   */
  const referrersApi = new Map<string, Promise<boolean>>();

  const acquireSlot = () =>
    new Promise<() => void>((granted) => {
      void limit(() => new Promise<void>((release) => granted(release)));
    });

  const baseUrl = (registry: string) =>
    `${plainHttp(registry) ? "http" : "https"}://${registry === DOCKER_HUB ? "registry-1.docker.io" : registry}`;

  async function authorize(
    ref: RegistryImageReference,
    challenges: AuthChallenge[],
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const found = credentials(ref.registry, ref.repository);
    const bearer = challenges.find((c) => c.scheme === "bearer");
    if (bearer?.params.realm) return `Bearer ${await fetchToken(ref, bearer, found, what, signal)}`;
    if (challenges.some((c) => c.scheme === "basic")) {
      if (!found) {
        throw new RegistryError(
          "unauthorized",
          `${what}: ${ref.registry} requires credentials and none were found for it (set REGISTRY_AUTH_FILE or log in with podman/docker)`,
        );
      }
      return basic(found);
    }
    throw new RegistryError(
      "unauthorized",
      `${what}: ${ref.registry} refused access without a usable challenge`,
    );
  }

  async function fetchToken(
    ref: RegistryImageReference,
    challenge: AuthChallenge,
    found: Credentials | undefined,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const url = URL.parse(challenge.params.realm!);
    if (!url)
      throw new RegistryError(
        "bad-response",
        `${what}: ${ref.registry} named a token realm that is not a URL`,
      );
    // Credentials go to a token server over TLS only (loopback over plain HTTP, like the registry itself).
    if (url.protocol !== "https:" && !(url.protocol === "http:" && plainHttp(url.host))) {
      throw new RegistryError(
        "refused",
        `${what}: ${ref.registry} sends us to the token server ${url.protocol}//${url.host}; only https token servers are used`,
      );
    }
    if (challenge.params.service) url.searchParams.set("service", challenge.params.service);
    // A mount asks for two repositories at once: one `scope` parameter each, as docker sends them.
    for (const scope of (challenge.params.scope ?? `repository:${ref.repository}:pull`).split(" ")) {
      if (scope) url.searchParams.append("scope", scope);
    }
    const response = await httpAttempt({
      fetch: fetchFn,
      url: url.toString(),
      headers: found ? { authorization: basic(found) } : {},
      timeoutMs,
      what: `${what} (token)`,
      ...(signal ? { signal } : {}),
      ...egress,
    });
    const body = await response.bytes(1024 * 1024);
    if (response.status === 401 || response.status === 403) {
      throw new RegistryError(
        "unauthorized",
        found
          ? `${what}: the token server of ${ref.registry} rejected the credentials for ${found.username}`
          : `${what}: ${ref.registry} requires credentials and none were found for it (set REGISTRY_AUTH_FILE or log in with podman/docker)`,
      );
    }
    if (response.status !== 200) {
      throw new RegistryError("bad-response", `${what}: token server answered ${response.status}`);
    }
    const parsed = tokenResponseSchema.safeParse(JSON.parse(body.toString("utf8") || "{}"));
    const token = parsed.success ? (parsed.data.token ?? parsed.data.access_token) : undefined;
    if (!token) throw new RegistryError("bad-response", `${what}: token server answered without a token`);
    return token;
  }

  /**
   * One request with auth: an unauthorized answer is met by answering its challenge once (a body is
   * made again for the second attempt). Only registries the bot may speak to are asked.
   */
  async function authorized(
    ref: RegistryImageReference,
    request: {
      method?: string;
      /** A path under the repository (`manifests/…`), or an upload's Location as the registry gave it. */
      path?: string;
      url?: string;
      headers?: Record<string, string>;
      body?: () => Buffer | Readable;
    },
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    const key = `${ref.registry}/${ref.repository}`;
    if (!allowRegistry(ref.registry)) {
      throw new RegistryError(
        "refused",
        `${what}: ${ref.registry} is not among the registries this bot reads; its operator can allow it`,
      );
    }
    const url = request.url ?? `${baseUrl(ref.registry)}/v2/${ref.repository}/${request.path ?? ""}`;
    const send = (authorization: string | undefined) =>
      httpAttempt({
        fetch: fetchFn,
        url,
        ...(request.method ? { method: request.method } : {}),
        headers: { ...request.headers, ...(authorization ? { authorization } : {}) },
        ...(request.body ? { body: request.body() } : {}),
        timeoutMs,
        what,
        ...(signal ? { signal } : {}),
        ...egress,
      });
    let response = await send(authorizations.get(key));
    if (response.status === 401) {
      response.discard();
      const authorization = await authorize(
        ref,
        parseWwwAuthenticate(response.headers.get("www-authenticate") ?? ""),
        what,
        signal,
      );
      authorizations.set(key, authorization);
      response = await send(authorization);
      if (response.status === 401) {
        response.discard();
        throw new RegistryError(
          "unauthorized",
          `${what}: ${ref.registry} rejected the credentials (401 Unauthorized)`,
        );
      }
    }
    return response;
  }

  /** One GET with auth; anything but 200 is an error saying what it means. */
  async function get(
    ref: RegistryImageReference,
    path: string,
    accept: string,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    const response = await authorized(ref, { path, headers: { accept } }, what, signal);
    if (response.status === 403) {
      response.discard();
      throw new RegistryError(
        "forbidden",
        `${what}: access denied (403 Forbidden); the credentials lack pull rights`,
      );
    }
    if (response.status === 404) {
      response.discard();
      throw new RegistryError("not-found", `${what}: not found in ${ref.registry} (404)`);
    }
    if (response.status !== 200) {
      // The body is the registry's to write and would reach the PR: the status says enough.
      response.discard();
      throw new RegistryError("bad-response", `${what}: unexpected HTTP ${response.status}`);
    }
    return response;
  }

  /** One small JSON GET under the slot and retries; undefined on 404. */
  async function getDocument(
    ref: RegistryImageReference,
    path: string,
    accept: string,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<{ bytes: Buffer; headers: Headers } | undefined> {
    const release = await acquireSlot();
    try {
      return await withRetries(
        retry,
        async () => {
          try {
            const response = await get(ref, path, accept, what, signal);
            return { bytes: await response.bytes(MAX_MANIFEST_BYTES), headers: response.headers };
          } catch (error) {
            if (error instanceof RegistryError && error.code === "not-found") return undefined;
            throw error;
          }
        },
        signal,
      );
    } finally {
      release();
    }
  }

  const parseReferrers = (bytes: Buffer, what: string): Descriptor[] => {
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString("utf8"));
    } catch (cause) {
      throw new RegistryError("bad-response", `${what}: not JSON`, { cause });
    }
    const parsed = referrersIndexSchema.safeParse(json);
    if (!parsed.success)
      throw new RegistryError("bad-response", `${what}: ${z.prettifyError(parsed.error)}`, {
        cause: parsed.error,
      });
    return parsed.data.manifests;
  };

  /** The referrers API, following `Link: <…>; rel="next"` pages in the same repository; undefined on 404. */
  async function referrersFromApi(
    ref: RegistryImageReference,
    subject: string,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<Descriptor[] | undefined> {
    const prefix = `/v2/${ref.repository}/`;
    let path: string | undefined = `referrers/${subject}`;
    const found: Descriptor[] = [];
    for (let page = 0; path !== undefined && page < MAX_REFERRER_PAGES; page++) {
      const document = await getDocument(ref, path, MEDIA_TYPES.ociIndex, what, signal);
      if (!document) {
        if (page === 0) return undefined;
        throw new RegistryError(
          "bad-response",
          `${what}: page ${page + 1} of the referrers list is gone (404)`,
        );
      }
      found.push(...parseReferrers(document.bytes, what));
      const next = /<([^>]+)>\s*;\s*rel="?next"?/.exec(document.headers.get("link") ?? "")?.[1];
      const nextPath = next ? new URL(next, "http://registry.invalid").pathname : undefined;
      // Pages are only followed inside the same repository of the same registry.
      path =
        next && nextPath?.startsWith(prefix) && (next.startsWith("/") || new URL(next).host === ref.registry)
          ? `${nextPath.slice(prefix.length)}${new URL(next, "http://registry.invalid").search}`
          : undefined;
    }
    return found;
  }

  /** The referrers tag schema: an index tagged `sha256-<hex>`; no such tag, no referrers. */
  async function referrersFromTag(
    ref: RegistryImageReference,
    subject: string,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<Descriptor[]> {
    const tag = subject.replace(":", "-").slice(0, 128);
    const document = await getDocument(
      ref,
      `manifests/${tag}`,
      MANIFEST_ACCEPT,
      `${what} (tag ${tag})`,
      signal,
    );
    return document ? parseReferrers(document.bytes, `${what} (tag ${tag})`) : [];
  }

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

  /** Where an upload goes next: the registry's Location, on the registry's own host only (it gets our credentials). */
  function uploadLocation(response: HttpResponse, ref: RegistryImageReference, what: string): URL {
    const base = baseUrl(ref.registry);
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
    const head = await authorized(ref, { method: "HEAD", path: `blobs/${blob.digest}` }, what, signal);
    head.discard();
    if (head.status === 200) return "exists";
    if (head.status !== 404) throw await pushRefused(head, ref, what);
    const mount = mountFrom
      ? `?mount=${encodeURIComponent(blob.digest)}&from=${encodeURIComponent(mountFrom)}`
      : "";
    const start = await authorized(
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
        return await authorized(
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
    async getManifest(ref, { signal } = {}) {
      const reference = ref.digest ?? ref.tag ?? "latest";
      const what = `manifest of ${formatImageReference(ref)}`;
      const release = await acquireSlot();
      try {
        return await withRetries(
          retry,
          async () => {
            const response = await get(ref, `manifests/${reference}`, MANIFEST_ACCEPT, what, signal);
            const bytes = await response.bytes(MAX_MANIFEST_BYTES);
            const digest = sha256Digest(bytes);
            const served = response.headers.get("docker-content-digest");
            if (served && served !== digest && served.startsWith("sha256:")) {
              throw new RegistryError(
                "digest-mismatch",
                `${what}: registry says ${served} but the content hashes to ${digest}`,
              );
            }
            const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
            return { digest, mediaType, bytes };
          },
          signal,
        );
      } finally {
        release();
      }
    },

    async listReferrers(ref, subject, { signal } = {}) {
      const what = `referrers of ${ref.registry}/${ref.repository}@${subject}`;
      const key = `${ref.registry}/${ref.repository}`;
      const known = referrersApi.get(key);
      if (known === undefined) {
        const first = referrersFromApi(ref, subject, what, signal);
        referrersApi.set(
          key,
          first.then(
            (found) => found !== undefined,
            () => {
              referrersApi.delete(key); // A failure teaches nothing: the next call asks again.
              return true;
            },
          ),
        );
        return (await first) ?? referrersFromTag(ref, subject, what, signal);
      }
      if (await known) {
        const found = await referrersFromApi(ref, subject, what, signal);
        if (found) return found;
      }
      return referrersFromTag(ref, subject, what, signal);
    },

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
        const release = await acquireSlot();
        try {
          return await withRetries(retry, () => uploadBlob(ref, blob, from, what, signal), signal);
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
      const release = await acquireSlot();
      try {
        return await withRetries(
          retry,
          async () => {
            const response = await authorized(
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
          },
          signal,
        );
      } finally {
        release();
      }
    },

    async openBlob(ref, digest, { signal } = {}) {
      const what = `blob ${digest} of ${ref.registry}/${ref.repository}`;
      const release = await acquireSlot();
      try {
        const response = await withRetries(
          retry,
          () => get(ref, `blobs/${digest}`, "*/*", what, signal),
          signal,
        );
        const body = response.stream();
        body.once("close", release);
        return body;
      } catch (error) {
        release();
        throw error;
      }
    },
  };
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

function basic(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
}
