import { z } from "zod";
import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** The latest payload of a release stream, as the release-controller reports it. */
export interface LatestRelease {
  /** The release name, e.g. 4.19.0-0.nightly-2026-05-20-101112. */
  name: string;
  /** The payload's pullspec. */
  pullSpec: string;
  /** Accepted, Rejected, Ready … (the release-controller's phase). */
  phase?: string;
}

export type ReleaseControllerErrorCode = "unknown-stream" | "unavailable" | "invalid-response";

export class ReleaseControllerError extends NetstressError<ReleaseControllerErrorCode> {
  override readonly name = "ReleaseControllerError";

  constructor(code: ReleaseControllerErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { code, cause: options.cause });
  }
}

export interface ReleaseController {
  /** The stream's latest payload; ReleaseControllerError when the stream is unknown or the controller fails. */
  latest(stream: string): Promise<LatestRelease>;
}

const latestSchema = z.looseObject({
  name: z.string().min(1),
  pullSpec: z.string().min(1),
  phase: z.string().optional(),
});

/** Far more than any answer of `/latest` (a few hundred bytes). */
const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
const MAX_REDIRECTS = 3;

/**
 * A client of the OpenShift release-controller's `/api/v1/releasestream/{stream}/latest`. A 404 is
 * an unknown stream (the caller's mistake); anything else that goes wrong is the controller's. Its
 * answers are read up to `maxBodyBytes`, and it follows redirects only on the controller's own
 * origin: the bot installs what this answers, so nobody else gets to answer it.
 */
export function createReleaseController(options: {
  baseUrl: string;
  timeoutMs?: number;
  maxBodyBytes?: number;
  fetch?: typeof globalThis.fetch;
}): ReleaseController {
  const { timeoutMs = 10_000, maxBodyBytes = DEFAULT_MAX_BODY_BYTES, fetch = globalThis.fetch } = options;
  const base = options.baseUrl.replace(/\/+$/, "");
  const origin = new URL(base).origin;

  /** The answer to GET `url`, following redirects that stay on the controller's origin. */
  const get = async (url: string, stream: string, signal: AbortSignal): Promise<Response> => {
    let target = url;
    for (let hop = 0; ; hop += 1) {
      let response: Response;
      try {
        response = await fetch(target, {
          headers: { accept: "application/json" },
          redirect: "manual",
          signal,
        });
      } catch (error) {
        throw new ReleaseControllerError(
          "unavailable",
          `the release-controller at ${base} did not answer: ${(error as Error).message}`,
          { cause: error },
        );
      }
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || location === null) return response;
      await response.body?.cancel();
      const next = new URL(location, target);
      if (next.origin !== origin) {
        throw new ReleaseControllerError(
          "invalid-response",
          `the release-controller redirected stream "${stream}" to ${next.origin}, another host: not followed`,
        );
      }
      if (hop >= MAX_REDIRECTS) {
        throw new ReleaseControllerError(
          "invalid-response",
          `the release-controller redirected stream "${stream}" more than ${MAX_REDIRECTS} times`,
        );
      }
      target = next.href;
    }
  };

  return {
    async latest(stream) {
      const url = `${base}/api/v1/releasestream/${encodeURIComponent(stream)}/latest`;
      const response = await get(url, stream, AbortSignal.timeout(timeoutMs));
      if (response.status === 404) {
        await response.body?.cancel();
        throw new ReleaseControllerError(
          "unknown-stream",
          `the release-controller knows no release stream "${stream}"`,
        );
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ReleaseControllerError(
          "unavailable",
          `the release-controller answered ${response.status} for stream "${stream}"`,
        );
      }
      let body: unknown;
      try {
        body = JSON.parse(await readCapped(response, maxBodyBytes));
      } catch (error) {
        if (error instanceof ReleaseControllerError) throw error;
        throw new ReleaseControllerError(
          "invalid-response",
          `the release-controller sent no JSON for stream "${stream}"`,
          { cause: error },
        );
      }
      const parsed = latestSchema.safeParse(body);
      if (!parsed.success) {
        throw new ReleaseControllerError(
          "invalid-response",
          `the release-controller's answer for stream "${stream}" has no name and pullSpec`,
          {
            cause: parsed.error,
          },
        );
      }
      const { name, pullSpec, phase } = parsed.data;
      return { name, pullSpec, ...(phase ? { phase } : {}) };
    },
  };
}

/** The body as text, refused once it grows past `maxBytes`. */
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      size += chunk.byteLength;
      // Leaving the loop cancels the body: the rest is never read.
      if (size > maxBytes) {
        throw new ReleaseControllerError(
          "invalid-response",
          `the release-controller's answer is larger than ${maxBytes} bytes`,
        );
      }
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks).toString("utf8");
}
