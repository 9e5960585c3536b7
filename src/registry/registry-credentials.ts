import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { DOCKER_HUB } from "./image-reference.ts";
import { RegistryError } from "./registry-error.ts";

export interface Credentials {
  username: string;
  password: string;
}

/** Finds the credentials for a repository, most specific auth-file key first. */
export type CredentialLookup = (registry: string, repository: string) => Credentials | undefined;

const authFileSchema = z.looseObject({
  auths: z
    .record(
      z.string(),
      z.looseObject({
        auth: z.string().optional(),
        username: z.string().optional(),
        password: z.string().optional(),
      }),
    )
    .optional(),
});

/** `https://index.docker.io/v1/` → `docker.io`, `quay.io/org/` → `quay.io/org`. */
function normalizeKey(key: string): string {
  let k = key.replace(/^https?:\/\//, "").replace(/\/+$/, "");
  k = k.replace(/\/v[12]$/, "");
  const [host = "", ...path] = k.split("/");
  const registry = host === "index.docker.io" || host === "registry-1.docker.io" ? DOCKER_HUB : host;
  return [registry, ...path].join("/");
}

/**
 * Parses a docker `config.json` / containers `auth.json` (pull secret) into registry-keyed
 * credentials. Credential helpers are not run: this tool never executes programs named in files.
 */
export function parseAuthFile(options: { text: string; source: string }): Map<string, Credentials> {
  let json: unknown;
  try {
    json = JSON.parse(options.text);
  } catch (cause) {
    throw new RegistryError("bad-response", `registry auth file ${options.source} is not JSON`, { cause });
  }
  const parsed = authFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new RegistryError(
      "bad-response",
      `registry auth file ${options.source} is malformed: ${z.prettifyError(parsed.error)}`,
    );
  }
  const result = new Map<string, Credentials>();
  for (const [key, entry] of Object.entries(parsed.data.auths ?? {})) {
    let credentials: Credentials | undefined;
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon > 0) credentials = { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    } else if (entry.username && entry.password !== undefined) {
      credentials = { username: entry.username, password: entry.password };
    }
    if (credentials) result.set(normalizeKey(key), credentials);
  }
  return result;
}

/** A lookup over parsed auth files; the first file that has a matching key wins. */
export function credentialLookup(files: readonly Map<string, Credentials>[]): CredentialLookup {
  return (registry, repository) => {
    const parts = repository.split("/");
    const keys: string[] = [];
    for (let n = parts.length; n > 0; n--) keys.push(`${registry}/${parts.slice(0, n).join("/")}`);
    keys.push(registry);
    for (const file of files) {
      for (const key of keys) {
        const found = file.get(key);
        if (found) return found;
      }
    }
    return undefined;
  };
}

/** Where pull secrets live, in the order podman, skopeo and openshift-tests consult them. */
export function authFilePaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string[] {
  if (env.REGISTRY_AUTH_FILE) return [env.REGISTRY_AUTH_FILE];
  const paths: string[] = [];
  if (env.XDG_RUNTIME_DIR) paths.push(join(env.XDG_RUNTIME_DIR, "containers", "auth.json"));
  paths.push(join(env.DOCKER_CONFIG ?? join(home, ".docker"), "config.json"));
  return paths;
}

/**
 * Loads credentials from the auth files that exist. `REGISTRY_AUTH_FILE`, when set, must exist:
 * a pull secret that silently fails to load would show up later as a baffling 401.
 */
export async function loadCredentials(
  options: { env?: NodeJS.ProcessEnv; home?: string } = {},
): Promise<CredentialLookup> {
  const env = options.env ?? process.env;
  const files: Map<string, Credentials>[] = [];
  for (const path of authFilePaths(env, options.home)) {
    const text = await readFile(path, "utf8").catch((cause: NodeJS.ErrnoException) => {
      if (cause.code === "ENOENT" && !env.REGISTRY_AUTH_FILE) return undefined;
      throw new RegistryError("unauthorized", `cannot read registry auth file ${path}: ${cause.message}`, {
        cause,
      });
    });
    if (text !== undefined) files.push(parseAuthFile({ text, source: path }));
  }
  return credentialLookup(files);
}
