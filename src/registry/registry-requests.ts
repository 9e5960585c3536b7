import type { Readable } from "node:stream";
import pLimit from "p-limit";
import type { EgressGuard } from "./egress-guard.ts";
import {
  httpAttempt,
  withRetries,
  type FetchFunction,
  type HttpResponse,
  type RetryPolicy,
} from "./http-attempt.ts";
import { DOCKER_HUB, type RegistryImageReference } from "./image-reference.ts";
import type { AnswerChallenge } from "./registry-auth.ts";
import { RegistryError } from "./registry-error.ts";

/** The most a manifest, referrers index or other document may weigh. */
export const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;

/** What a caller can ask of one call: a signal that abandons it (requests, retries and body). */
export interface RequestOptions {
  signal?: AbortSignal;
}

/** One request to a repository: a path under it (`manifests/…`), or an upload's Location as the registry gave it. */
export interface RepositoryRequest {
  method?: string;
  path?: string;
  url?: string;
  headers?: Record<string, string>;
  /** Made again for the attempt after an auth challenge. */
  body?: () => Buffer | Readable;
}

/** The request core pull and push share: allow-list, auth, retries, and the bounded slots. */
export interface RegistryRequests {
  /** The registry's base URL, `https://host` (or `http://` for plain-HTTP registries). */
  baseUrl(registry: string): string;
  /** A request slot, held until the returned function is called (a blob being read holds it until consumed). */
  acquireSlot(): Promise<() => void>;
  /** `attempt` with retries of the transient failures, abandoned with `signal`. */
  withRetries<T>(attempt: () => Promise<T>, signal: AbortSignal | undefined): Promise<T>;
  /**
   * One request with auth: an unauthorized answer is met by answering its challenge once (a body is
   * made again for the second attempt). Only registries the bot may speak to are asked.
   */
  authorized(
    ref: RegistryImageReference,
    request: RepositoryRequest,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse>;
  /** One GET with auth; anything but 200 is an error saying what it means. */
  get(
    ref: RegistryImageReference,
    path: string,
    accept: string,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse>;
  /** One small document (at most 4 MiB) GET under a slot and retries; undefined on 404. */
  getDocument(
    ref: RegistryImageReference,
    path: string,
    accept: string,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<{ bytes: Buffer; headers: Headers } | undefined>;
}

export function createRegistryRequests({
  fetch,
  answerChallenge,
  timeoutMs,
  retry,
  concurrency,
  plainHttp,
  allowRegistry,
  guard,
}: {
  fetch: FetchFunction;
  answerChallenge: AnswerChallenge;
  timeoutMs: number;
  retry: RetryPolicy;
  concurrency: number;
  plainHttp: (registry: string) => boolean;
  allowRegistry: (registry: string) => boolean;
  guard: EgressGuard | undefined;
}): RegistryRequests {
  const limit = pLimit(concurrency);
  /** Authorization header per registry/repository, learned from the last challenge. */
  const authorizations = new Map<string, string>();

  const baseUrl = (registry: string) =>
    `${plainHttp(registry) ? "http" : "https"}://${registry === DOCKER_HUB ? "registry-1.docker.io" : registry}`;

  const acquireSlot = () =>
    new Promise<() => void>((granted) => {
      void limit(() => new Promise<void>((release) => granted(release)));
    });

  async function authorized(
    ref: RegistryImageReference,
    request: RepositoryRequest,
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
        fetch,
        url,
        ...(request.method ? { method: request.method } : {}),
        headers: { ...request.headers, ...(authorization ? { authorization } : {}) },
        ...(request.body ? { body: request.body() } : {}),
        timeoutMs,
        what,
        ...(signal ? { signal } : {}),
        ...(guard ? { guard } : {}),
        plainHttp,
      });
    let response = await send(authorizations.get(key));
    if (response.status === 401) {
      response.discard();
      const authorization = await answerChallenge(
        ref,
        response.headers.get("www-authenticate") ?? "",
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

  return {
    baseUrl,
    acquireSlot,
    withRetries: (attempt, signal) => withRetries(retry, attempt, signal),
    authorized,
    get,
    async getDocument(ref, path, accept, what, signal) {
      const release = await acquireSlot();
      try {
        return await withRetries(
          retry,
          async () => {
            try {
              const response = await get(ref, path, accept, what, signal);
              return { bytes: await response.bytes(MAX_DOCUMENT_BYTES), headers: response.headers };
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
    },
  };
}
