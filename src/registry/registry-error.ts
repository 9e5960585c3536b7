import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/** What went wrong, so that callers and users can tell "fix your input" from "try again later". */
export type RegistryErrorCode =
  | "invalid-reference"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "timeout"
  | "unavailable"
  | "bad-response"
  | "digest-mismatch"
  | "platform-mismatch"
  | "unsupported-media-type"
  | "corrupt-layer"
  | "too-large"
  | "unsafe-path"
  /** The caller's deadline passed or it gave up: not retried. */
  | "deadline-exceeded"
  /** More bytes than the caller's budget allows were read. */
  | "budget-exceeded"
  /** The bot's policy forbids the request (an address, a registry, a layout, plain HTTP). */
  | "refused";

const RETRYABLE: ReadonlySet<RegistryErrorCode> = new Set(["timeout", "unavailable"]);

/** A failure to read an image from a registry or an OCI layout. */
export class RegistryError extends NetstressError<RegistryErrorCode> {
  override readonly name = "RegistryError";
  /** Milliseconds the server asked us to wait (Retry-After), when it said so. */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: RegistryErrorCode,
    message: string,
    options: { cause?: unknown; retryAfterMs?: number } = {},
  ) {
    super(message, { code, cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}
