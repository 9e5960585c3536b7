import { createHash } from "node:crypto";
import { Transform } from "node:stream";
import { RegistryError } from "./registry-error.ts";

/** `sha256:<hex>` of the bytes. */
export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** The hex part of a sha256 digest; other algorithms are refused because nothing here can verify them. */
export function sha256Hex(digest: string): string {
  const match = /^sha256:([a-f0-9]{64})$/.exec(digest);
  if (!match?.[1]) {
    throw new RegistryError(
      "unsupported-media-type",
      `cannot verify digest "${digest}": only sha256 is supported`,
    );
  }
  return match[1];
}

/** Throws a digest-mismatch error unless the bytes hash to the expected digest. */
export function verifyDigest(options: { bytes: Uint8Array; expected: string; what: string }): void {
  sha256Hex(options.expected);
  const actual = sha256Digest(options.bytes);
  if (actual !== options.expected) {
    throw new RegistryError(
      "digest-mismatch",
      `${options.what}: content has digest ${actual} but ${options.expected} was expected; refusing to use it`,
    );
  }
}

/**
 * A pass-through stream that fails at its end unless everything that went through hashes to the
 * expected digest and (when known) has the expected size, so that no consumer trusts unverified bytes.
 */
export function createDigestVerifier(options: { expected: string; size?: number; what: string }): Transform {
  sha256Hex(options.expected);
  const hash = createHash("sha256");
  let length = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      length += chunk.length;
      if (options.size !== undefined && length > options.size) {
        callback(
          new RegistryError(
            "digest-mismatch",
            `${options.what}: more than the ${options.size} bytes its descriptor declares`,
          ),
        );
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      const actual = `sha256:${hash.digest("hex")}`;
      if (actual !== options.expected) {
        callback(
          new RegistryError(
            "digest-mismatch",
            `${options.what}: content has digest ${actual} (${length} bytes) but ${options.expected} was expected; refusing to use it`,
          ),
        );
      } else callback();
    },
  });
}
