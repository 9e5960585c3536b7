import { setTimeout as delay } from "node:timers/promises";
import { Readable, Transform } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { EgressGuard } from "./egress-guard.ts";
import { RegistryError } from "./registry-error.ts";

export type FetchFunction = typeof fetch;

export interface HttpResponse {
  status: number;
  headers: Headers;
  /** The whole body, for small documents (manifests, tokens, error texts); more than maxBytes is refused. */
  bytes(maxBytes: number): Promise<Buffer>;
  /** The body as a stream, for blobs; it errors with a timeout when no bytes arrive for the idle timeout. */
  stream(): Readable;
  /** Throws the body away so that the connection can be reused. */
  discard(): void;
}

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/**
 * One HTTP request with an idle timeout: the request fails when the response headers, or the next
 * body bytes, take longer than `timeoutMs` (a registry that accepts and never answers must not hang
 * us); bytes of a request body going out count as progress. 429 and 5xx become retryable errors;
 * connection failures too. Redirects are followed for GET and HEAD only: a body cannot be sent twice.
 */
export async function httpAttempt(options: {
  fetch: FetchFunction;
  url: string;
  /** GET unless said otherwise. */
  method?: string;
  headers: Record<string, string>;
  /** What a PUT, PATCH or POST sends; a stream is sent as it is read. */
  body?: Buffer | Readable;
  timeoutMs: number;
  what: string;
  /** The caller's deadline: aborting it fails the request, its body included, with a non-retryable error. */
  signal?: AbortSignal;
  /** Checks every URL before it is asked, the first and every redirect's. */
  guard?: EgressGuard;
  /** Hosts a redirect may send us to over plain HTTP; every other redirect must be to https. */
  plainHttp?: (host: string) => boolean;
}): Promise<HttpResponse> {
  const { what, signal } = options;
  const host = new URL(options.url).host;
  const controller = new AbortController();
  const abandon = () => controller.abort(abandonedError(what, signal!));
  if (signal?.aborted) throw abandonedError(what, signal);
  signal?.addEventListener("abort", abandon, { once: true });
  const release = () => signal?.removeEventListener("abort", abandon);
  const timeoutError = () =>
    new RegistryError("timeout", `${what}: no answer from ${host} within ${options.timeoutMs} ms`);
  // One timer that re-checks when it fires, rather than a new timer for every chunk that arrives.
  let lastProgress = Date.now();
  const check = () => {
    const idle = Date.now() - lastProgress;
    if (idle >= options.timeoutMs) controller.abort(timeoutError());
    else timer = setTimeout(check, options.timeoutMs - idle);
  };
  let timer = setTimeout(check, options.timeoutMs);
  const rearm = () => {
    lastProgress = Date.now();
  };
  const stop = () => {
    clearTimeout(timer);
    release();
  };
  const failure = (cause: unknown, doing: string) => {
    stop();
    if (cause instanceof RegistryError) return cause;
    const reason: unknown = controller.signal.reason;
    if (reason instanceof RegistryError) return reason;
    return new RegistryError("unavailable", `${what}: ${doing}: ${describeNetworkError(cause)}`, { cause });
  };
  let response: Response;
  let url = new URL(options.url);
  let headers = options.headers;
  const method = options.method ?? "GET";
  const body = options.body === undefined ? undefined : progressBody(options.body, rearm);
  // Redirects are followed here, not by fetch, so that every hop is checked before it is asked.
  for (let hop = 0; ; hop++) {
    try {
      await options.guard?.(url, what);
      response = await options.fetch(url.toString(), {
        method,
        headers,
        signal: controller.signal,
        redirect: "manual",
        ...(body ? { body: body as unknown as RequestInit["body"], duplex: "half" } : {}),
      } as RequestInit);
    } catch (cause) {
      throw failure(cause, `cannot reach ${url.host}`);
    }
    if (!REDIRECT_STATUS.has(response.status) || (method !== "GET" && method !== "HEAD")) break;
    void response.body?.cancel().catch(() => {});
    const location = response.headers.get("location");
    const next = location ? URL.parse(location, url.toString()) : null;
    const refuse = (code: "bad-response" | "refused", why: string) => {
      stop();
      return new RegistryError(code, `${what}: ${url.host} ${why}`);
    };
    if (!next) throw refuse("bad-response", `answered ${response.status} without a usable Location`);
    if (hop >= MAX_REDIRECTS) throw refuse("bad-response", `redirected more than ${MAX_REDIRECTS} times`);
    const plain = next.protocol === "http:" && (options.plainHttp?.(next.host) ?? false);
    if (next.protocol !== "https:" && !plain) {
      throw refuse(
        "refused",
        `redirected to ${next.protocol}//${next.host}: only https redirects are followed`,
      );
    }
    // Credentials are for the host they were given for, never for wherever it sends us.
    if (next.host !== url.host) headers = withoutAuthorization(headers);
    url = next;
  }
  const web = response.body as WebReadableStream<Uint8Array> | null;
  const result: HttpResponse = {
    status: response.status,
    headers: response.headers,
    async bytes(maxBytes) {
      const declared = Number(response.headers.get("content-length") ?? "0");
      if (declared > maxBytes) {
        result.discard();
        throw new RegistryError("too-large", `${what}: ${declared} bytes, more than the ${maxBytes} allowed`);
      }
      const chunks: Uint8Array[] = [];
      let length = 0;
      try {
        for await (const chunk of web ?? []) {
          rearm();
          length += chunk.length;
          if (length > maxBytes) {
            controller.abort();
            throw new RegistryError("too-large", `${what}: larger than ${maxBytes} bytes`);
          }
          chunks.push(chunk);
        }
      } catch (cause) {
        throw failure(cause, "connection dropped while reading");
      }
      stop();
      return Buffer.concat(chunks);
    },
    stream() {
      const source = web ? Readable.fromWeb(web) : Readable.from([] as Buffer[]);
      const body = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          rearm();
          callback(null, chunk);
        },
        flush(callback) {
          stop();
          callback();
        },
      });
      source.once("error", (cause) => body.destroy(failure(cause, "connection dropped while reading")));
      body.once("close", () => stop());
      return source.pipe(body);
    },
    discard() {
      stop();
      void web?.cancel().catch(() => {});
    },
  };

  if (RETRYABLE_STATUS.has(response.status)) {
    result.discard();
    const retryAfter = Number(response.headers.get("retry-after"));
    throw new RegistryError("unavailable", `${what}: ${host} answered ${response.status}`, {
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    });
  }
  return result;
}

/** A request body that re-arms the idle timer as its bytes go out (a large upload is progress, not silence). */
function progressBody(body: Buffer | Readable, progress: () => void): Readable {
  const PIECE = 64 * 1024;
  const source =
    body instanceof Readable
      ? body
      : Readable.from(
          (function* () {
            for (let at = 0; at < body.length; at += PIECE) yield body.subarray(at, at + PIECE);
          })(),
        );
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      progress();
      callback(null, chunk);
    },
  });
  source.once("error", (error) => counted.destroy(error));
  // fetch reads the body later, and a body that fails first must not be an unhandled error: the
  // read then fails with it, and so does the request.
  counted.on("error", () => {});
  return source.pipe(counted);
}

/** The caller gave up (its deadline passed, or the run was stopped): no retry can help. */
function abandonedError(what: string, signal: AbortSignal): RegistryError {
  const reason: unknown = signal.reason;
  if (reason instanceof RegistryError) return reason;
  const why =
    reason instanceof Error && reason.name === "TimeoutError" ? "the deadline passed" : "it was cancelled";
  return new RegistryError("deadline-exceeded", `${what}: abandoned because ${why}`, { cause: reason });
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => name.toLowerCase() !== "authorization"),
  );
}

function describeNetworkError(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : "";
  return `${cause.message}${inner}`;
}

/** Reads a whole body, refusing more than `maxBytes` (manifests and tokens are small). */
export async function readBody(options: { body: Readable; maxBytes: number; what: string }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of options.body as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > options.maxBytes) {
      options.body.destroy();
      throw new RegistryError("too-large", `${options.what}: larger than ${options.maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export interface RetryPolicy {
  retries: number;
  backoffMs: number;
  sleep?: (ms: number) => Promise<void>;
  onRetry?: (error: RegistryError, attempt: number, delayMs: number) => void;
}

/** Runs `attempt` again after retryable failures, with exponential backoff and jitter, honouring Retry-After. */
export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  // A deadline ends the wait at once, and the loop then reports it; a wait that runs its course
  // leaves no listener behind on the caller's signal (many requests share one).
  const sleep = policy.sleep ?? ((ms: number) => delay(ms, undefined, { signal }).catch(() => undefined));
  for (let n = 0; ; n++) {
    if (signal?.aborted) throw abandonedError("waiting to retry", signal);
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof RegistryError) || !error.retryable || n >= policy.retries) {
        if (error instanceof RegistryError && error.retryable && n > 0) {
          throw new RegistryError(error.code, `${error.message} (gave up after ${n + 1} attempts)`, {
            cause: error,
          });
        }
        throw error;
      }
      const backoff = policy.backoffMs * 2 ** n * (0.5 + Math.random());
      const delay = Math.min(error.retryAfterMs ?? backoff, 30_000);
      policy.onRetry?.(error, n + 1, delay);
      await sleep(delay);
    }
  }
}
