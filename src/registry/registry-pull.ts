import type { Readable } from "node:stream";
import { z } from "zod";
import { sha256Digest } from "./digest.ts";
import { formatImageReference, type RegistryImageReference } from "./image-reference.ts";
import { descriptorSchema, MANIFEST_ACCEPT, MEDIA_TYPES, type Descriptor } from "./manifest.ts";
import { MAX_DOCUMENT_BYTES, type RegistryRequests, type RequestOptions } from "./registry-requests.ts";
import { RegistryError } from "./registry-error.ts";

/** Manifest bytes as served, with the digest of exactly those bytes. */
export interface RawManifest {
  digest: string;
  mediaType: string;
  bytes: Buffer;
}

/** Reading a repository: manifests, blobs and referrers. */
export interface RegistryPull {
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
}
/** Pages of a referrers list followed at most: a registry that keeps linking is not followed forever. */
const MAX_REFERRER_PAGES = 20;
const referrersIndexSchema = z.looseObject({ manifests: z.array(descriptorSchema).default([]) });

function parseReferrers(bytes: Buffer, what: string): Descriptor[] {
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
}

/**
 * The reading half of the distribution API: manifests (at most 4 MiB, checked against the digest
 * the registry states), blobs as streams holding their request slot until consumed, and referrers
 * — the referrers API or, on a registry without it, the referrers tag schema.
 */
export function createRegistryPull(requests: RegistryRequests): RegistryPull {
  /**
   * Whether a repository's registry has the referrers API, learned from the first answer (one 404 per
   * repository). Per repository, not per registry: a registry with the API answers 404 for a
   * repository that is gone, which must not turn the API off for the others.
   */
  const referrersApi = new Map<string, Promise<boolean>>();

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
      const document = await requests.getDocument(ref, path, MEDIA_TYPES.ociIndex, what, signal);
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
    const document = await requests.getDocument(
      ref,
      `manifests/${tag}`,
      MANIFEST_ACCEPT,
      `${what} (tag ${tag})`,
      signal,
    );
    return document ? parseReferrers(document.bytes, `${what} (tag ${tag})`) : [];
  }

  return {
    async getManifest(ref, { signal } = {}) {
      const reference = ref.digest ?? ref.tag ?? "latest";
      const what = `manifest of ${formatImageReference(ref)}`;
      const release = await requests.acquireSlot();
      try {
        return await requests.withRetries(async () => {
          const response = await requests.get(ref, `manifests/${reference}`, MANIFEST_ACCEPT, what, signal);
          const bytes = await response.bytes(MAX_DOCUMENT_BYTES);
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
        }, signal);
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

    async openBlob(ref, digest, { signal } = {}) {
      const what = `blob ${digest} of ${ref.registry}/${ref.repository}`;
      const release = await requests.acquireSlot();
      try {
        const response = await requests.withRetries(
          () => requests.get(ref, `blobs/${digest}`, "*/*", what, signal),
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
