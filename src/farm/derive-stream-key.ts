import { hkdfSync } from "node:crypto";

/** Bytes of a record stream key (an HMAC-SHA256 key). */
export const STREAM_KEY_BYTES = 32;

/** Where a Job lives and what it is called: what its stream key is bound to. */
export interface StreamKeyScope {
  /** The farm cluster's name in the farm configuration. */
  cluster: string;
  namespace: string;
  job: string;
}

/**
 * The key a build-farm Job's runner signs its record stream with (see createStreamSigner):
 * HKDF-SHA256 of the bot's stream secret, bound to the farm cluster, namespace and Job name. Derived,
 * never stored, so that a restarted bot adopting a running Job verifies its stream with the same
 * key; Job names differ per run, arms, iteration and attempt, so no two pods share a key and a line
 * of one Job's stream does not verify in another's.
 */
export function deriveStreamKey(secret: string, scope: StreamKeyScope): Buffer {
  // NUL cannot occur in a cluster name, namespace or Job name: the parts cannot run into each other.
  const info = ["netstress record stream v1", scope.cluster, scope.namespace, scope.job].join("\0");
  return Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), info, STREAM_KEY_BYTES));
}
