import { parseImageReference } from "../registry/image-reference.ts";
import { RegistryError } from "../registry/registry-error.ts";
import { PayloadError } from "./payload-error.ts";

/** Payload tag → the pullspec of the image that replaces it (a PR build). */
export type Overrides = ReadonlyMap<string, string>;

const ENV_PREFIX = "EXTENSIONS_PAYLOAD_OVERRIDE_";
const TAG = /^[a-z0-9][a-z0-9._-]*$/i;

function checkOverride(tag: string, pullspec: string, origin: string): void {
  if (!TAG.test(tag))
    throw new PayloadError("invalid-override", `${origin}: "${tag}" is not a payload tag name`);
  try {
    parseImageReference(pullspec);
  } catch (cause) {
    const why = cause instanceof RegistryError ? cause.message : String(cause);
    throw new PayloadError("invalid-override", `${origin}: ${why}`, { cause });
  }
}

/**
 * `--override TAG=PULLSPEC` values (or other TAG=PULLSPEC arguments, named by `origin` in
 * messages); a tag named twice is a mistake, not a last-one-wins.
 */
export function parseOverrideFlags(values: readonly string[], origin = "--override"): Map<string, string> {
  const overrides = new Map<string, string>();
  for (const text of values) {
    const eq = text.indexOf("=");
    if (eq <= 0 || eq === text.length - 1) {
      throw new PayloadError(
        "invalid-override",
        `${origin} expects TAG=PULLSPEC (e.g. ovn-kubernetes=quay.io/org/ovn@sha256:…), got "${text}"`,
      );
    }
    const tag = text.slice(0, eq).trim();
    const pullspec = text.slice(eq + 1).trim();
    checkOverride(tag, pullspec, `${origin} ${text}`);
    if (overrides.has(tag)) throw new PayloadError("invalid-override", `${origin} names ${tag} twice`);
    overrides.set(tag, pullspec);
  }
  return overrides;
}

/** `EXTENSIONS_PAYLOAD_OVERRIDE_<tag>=<pullspec>`, the way openshift-tests reads per-tag overrides. */
export function overridesFromEnv(env: NodeJS.ProcessEnv): Map<string, string> {
  const overrides = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || !value) continue;
    const tag = name.slice(ENV_PREFIX.length);
    checkOverride(tag, value, name);
    overrides.set(tag, value);
  }
  return overrides;
}

/** Flags win over the environment, tag by tag. */
export function mergeOverrides(...layers: readonly Overrides[]): Map<string, string> {
  const merged = new Map<string, string>();
  for (const layer of layers) for (const [tag, pullspec] of layer) merged.set(tag, pullspec);
  return merged;
}
