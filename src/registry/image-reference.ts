import { RegistryError } from "./registry-error.ts";

/** An image in a registry, addressed by tag and/or digest. */
export interface RegistryImageReference {
  kind: "registry";
  /** Registry host with optional port, e.g. quay.io, 127.0.0.1:5000, docker.io. */
  registry: string;
  /** Repository path inside the registry, e.g. openshift-release-dev/ocp-release. */
  repository: string;
  tag?: string;
  digest?: string;
}

/** An image in an OCI image layout directory (`oci:DIR[:TAG]` or `oci:DIR@DIGEST`). */
export interface LayoutImageReference {
  kind: "oci-layout";
  dir: string;
  tag?: string;
  digest?: string;
}

export type ImageReference = RegistryImageReference | LayoutImageReference;

export const DOCKER_HUB = "docker.io";
const DIGEST = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const HOST =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]{1,5})?$/;

/**
 * Parses an image reference in the forms people paste: `quay.io/org/repo:tag`, `repo@sha256:…`,
 * `registry:5000/ns/name`, Docker Hub short names (`busybox`, `library/busybox`), and local OCI
 * layouts `oci:DIR[:TAG]` / `oci:DIR@sha256:…`.
 */
export function parseImageReference(text: string): ImageReference {
  const input = text.trim();
  if (input.startsWith("oci:")) return parseLayoutReference(input);
  const fail = (why: string): never => {
    throw new RegistryError("invalid-reference", `invalid image reference "${text}": ${why}`);
  };
  if (input === "") fail("it is empty");
  if (/\s/.test(input)) fail("it contains whitespace");

  let rest = input;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) fail(`"${digest}" is not a digest (expected algorithm:hex, e.g. sha256:…)`);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf("/");
  const colon = rest.lastIndexOf(":");
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) fail(`"${tag}" is not a valid tag`);
  }
  const parts = rest.split("/");
  const first = parts[0] ?? "";
  const hasHost =
    parts.length > 1 &&
    (first.includes(".") || first.includes(":") || first === "localhost" || first.startsWith("["));
  let registry = hasHost ? first : DOCKER_HUB;
  if (registry === "index.docker.io" || registry === "registry-1.docker.io") registry = DOCKER_HUB;
  if (hasHost && !HOST.test(registry)) fail(`"${registry}" is not a registry host`);
  const pathParts = hasHost ? parts.slice(1) : parts;
  if (pathParts.length === 0 || pathParts.some((p) => p === "")) fail("the repository name is empty");
  for (const part of pathParts) {
    if (!PATH_COMPONENT.test(part))
      fail(`"${part}" is not a valid repository name component (lowercase letters, digits, . _ -)`);
  }
  if (registry === DOCKER_HUB && pathParts.length === 1) pathParts.unshift("library");
  return {
    kind: "registry",
    registry,
    repository: pathParts.join("/"),
    ...(tag === undefined && digest === undefined ? { tag: "latest" } : {}),
    ...(tag !== undefined ? { tag } : {}),
    ...(digest !== undefined ? { digest } : {}),
  };
}

function parseLayoutReference(input: string): LayoutImageReference {
  const body = input.slice("oci:".length);
  const fail = (why: string): never => {
    throw new RegistryError("invalid-reference", `invalid OCI layout reference "${input}": ${why}`);
  };
  const at = body.lastIndexOf("@");
  if (at >= 0) {
    const digest = body.slice(at + 1);
    if (!DIGEST.test(digest)) fail(`"${digest}" is not a digest`);
    const dir = body.slice(0, at);
    if (dir === "") fail("the directory is empty");
    return { kind: "oci-layout", dir, digest };
  }
  const colon = body.lastIndexOf(":");
  const slash = body.lastIndexOf("/");
  if (colon > slash && colon > 0) {
    const dir = body.slice(0, colon);
    const tag = body.slice(colon + 1);
    if (!/^[\w][\w.:/+-]*$/.test(tag)) fail(`"${tag}" is not a valid reference name`);
    return { kind: "oci-layout", dir, tag };
  }
  if (body === "") fail("the directory is empty");
  return { kind: "oci-layout", dir: body };
}

/** The canonical text of a reference; parsing it again yields the same reference. */
export function formatImageReference(ref: ImageReference): string {
  if (ref.kind === "oci-layout") {
    if (ref.digest) return `oci:${ref.dir}@${ref.digest}`;
    return ref.tag ? `oci:${ref.dir}:${ref.tag}` : `oci:${ref.dir}`;
  }
  const name = `${ref.registry}/${ref.repository}`;
  if (ref.digest) return `${name}@${ref.digest}`;
  return `${name}:${ref.tag ?? "latest"}`;
}

/** The same image pinned to a digest (the tag is dropped: the digest is what was read). */
export function withDigest<T extends ImageReference>(ref: T, digest: string): T {
  const { tag: _tag, ...rest } = ref;
  return { ...rest, digest } as T;
}
