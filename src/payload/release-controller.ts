import { z } from "zod";
import { NetstressError } from "../errors/netstress-error.ts";

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

/**
 * A client of the OpenShift release-controller's `/api/v1/releasestream/{stream}/latest`. A 404 is
 * an unknown stream (the caller's mistake); anything else that goes wrong is the controller's.
 */
export function createReleaseController(options: {
  baseUrl: string;
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}): ReleaseController {
  const { timeoutMs = 10_000, fetch = globalThis.fetch } = options;
  const base = options.baseUrl.replace(/\/+$/, "");
  return {
    async latest(stream) {
      const url = `${base}/api/v1/releasestream/${encodeURIComponent(stream)}/latest`;
      let response: Response;
      try {
        response = await fetch(url, {
          headers: { accept: "application/json" },
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        throw new ReleaseControllerError(
          "unavailable",
          `the release-controller at ${base} did not answer: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
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
        body = await response.json();
      } catch (error) {
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
