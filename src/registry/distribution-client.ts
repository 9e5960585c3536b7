import { createChallengeAnswerer } from "./registry-auth.ts";
import type { EgressGuard } from "./egress-guard.ts";
import type { FetchFunction, RetryPolicy } from "./http-attempt.ts";
import type { CredentialLookup } from "./registry-credentials.ts";
import { createRegistryPull, type RegistryPull } from "./registry-pull.ts";
import { createRegistryPush, type RegistryPush } from "./registry-push.ts";
import { createRegistryRequests } from "./registry-requests.ts";
import { isLoopbackHost } from "../http/is-loopback-host.ts";

export type { RawManifest } from "./registry-pull.ts";
export type { BlobContent, BlobPushOutcome } from "./registry-push.ts";
export type { RequestOptions } from "./registry-requests.ts";

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

/** The OCI distribution API: manifests and blobs, read and pushed, with auth, retries and bounded concurrency. */
export interface DistributionClient extends RegistryPull, RegistryPush {}

const DEFAULT_UPLOAD_CHUNK_BYTES = 32 * 1024 * 1024;

export function isLoopbackRegistry(registry: string): boolean {
  return isLoopbackHost(registry.replace(/:\d+$/, ""));
}

/**
 * Auth (answering a 401's challenge), pull and push over one request core that holds the
 * allow-list, the egress guard, the retries and the bounded request slots.
 */
export function createDistributionClient(options: DistributionClientOptions = {}): DistributionClient {
  const fetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const plainHttp = options.plainHttp ?? isLoopbackRegistry;
  const requests = createRegistryRequests({
    fetch,
    answerChallenge: createChallengeAnswerer({
      fetch,
      credentials: options.credentials ?? (() => undefined),
      timeoutMs,
      plainHttp,
      guard: options.guard,
    }),
    timeoutMs,
    retry: { retries: 4, backoffMs: 250, ...options.retry },
    concurrency: options.concurrency ?? 16,
    plainHttp,
    allowRegistry: options.allowRegistry ?? (() => true),
    guard: options.guard,
  });
  return {
    ...createRegistryPull(requests),
    ...createRegistryPush(requests, {
      uploadChunkBytes: options.uploadChunkBytes ?? DEFAULT_UPLOAD_CHUNK_BYTES,
    }),
  };
}
