import { httpAttempt, type FetchFunction } from "./http-attempt.ts";
import type { EgressGuard } from "./egress-guard.ts";
import type { RegistryImageReference } from "./image-reference.ts";
import type { CredentialLookup, Credentials } from "./registry-credentials.ts";
import { RegistryError } from "./registry-error.ts";
import { parseWwwAuthenticate, type AuthChallenge } from "./www-authenticate.ts";
import { z } from "zod";

const tokenResponseSchema = z.looseObject({
  token: z.string().optional(),
  access_token: z.string().optional(),
});

/** The Authorization header that answers a registry's `WWW-Authenticate` challenge for a repository. */
export type AnswerChallenge = (
  ref: RegistryImageReference,
  wwwAuthenticate: string,
  what: string,
  signal: AbortSignal | undefined,
) => Promise<string>;

/**
 * Answers a 401's challenge: a bearer challenge with a token from its realm (over TLS only, the
 * credentials found for the repository sent as Basic, one `scope` per repository asked), a basic one
 * with the credentials themselves; anything else, or basic without credentials, is unauthorized.
 */
export function createChallengeAnswerer({
  fetch,
  credentials,
  timeoutMs,
  plainHttp,
  guard,
}: {
  fetch: FetchFunction;
  credentials: CredentialLookup;
  timeoutMs: number;
  plainHttp: (registry: string) => boolean;
  guard: EgressGuard | undefined;
}): AnswerChallenge {
  async function fetchToken(
    ref: RegistryImageReference,
    challenge: AuthChallenge,
    found: Credentials | undefined,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const url = URL.parse(challenge.params.realm!);
    if (!url)
      throw new RegistryError(
        "bad-response",
        `${what}: ${ref.registry} named a token realm that is not a URL`,
      );
    // Credentials go to a token server over TLS only (loopback over plain HTTP, like the registry itself).
    if (url.protocol !== "https:" && !(url.protocol === "http:" && plainHttp(url.host))) {
      throw new RegistryError(
        "refused",
        `${what}: ${ref.registry} sends us to the token server ${url.protocol}//${url.host}; only https token servers are used`,
      );
    }
    if (challenge.params.service) url.searchParams.set("service", challenge.params.service);
    // A mount asks for two repositories at once: one `scope` parameter each, as docker sends them.
    for (const scope of (challenge.params.scope ?? `repository:${ref.repository}:pull`).split(" ")) {
      if (scope) url.searchParams.append("scope", scope);
    }
    const response = await httpAttempt({
      fetch,
      url: url.toString(),
      headers: found ? { authorization: basic(found) } : {},
      timeoutMs,
      what: `${what} (token)`,
      ...(signal ? { signal } : {}),
      ...(guard ? { guard } : {}),
      plainHttp,
    });
    const body = await response.bytes(1024 * 1024);
    if (response.status === 401 || response.status === 403) {
      throw new RegistryError(
        "unauthorized",
        found
          ? `${what}: the token server of ${ref.registry} rejected the credentials for ${found.username}`
          : `${what}: ${ref.registry} requires credentials and none were found for it (set REGISTRY_AUTH_FILE or log in with podman/docker)`,
      );
    }
    if (response.status !== 200) {
      throw new RegistryError("bad-response", `${what}: token server answered ${response.status}`);
    }
    const parsed = tokenResponseSchema.safeParse(JSON.parse(body.toString("utf8") || "{}"));
    const token = parsed.success ? (parsed.data.token ?? parsed.data.access_token) : undefined;
    if (!token) throw new RegistryError("bad-response", `${what}: token server answered without a token`);
    return token;
  }

  return async (ref, wwwAuthenticate, what, signal) => {
    const challenges = parseWwwAuthenticate(wwwAuthenticate);
    const found = credentials(ref.registry, ref.repository);
    const bearer = challenges.find((c) => c.scheme === "bearer");
    if (bearer?.params.realm) return `Bearer ${await fetchToken(ref, bearer, found, what, signal)}`;
    if (challenges.some((c) => c.scheme === "basic")) {
      if (!found) {
        throw new RegistryError(
          "unauthorized",
          `${what}: ${ref.registry} requires credentials and none were found for it (set REGISTRY_AUTH_FILE or log in with podman/docker)`,
        );
      }
      return basic(found);
    }
    throw new RegistryError(
      "unauthorized",
      `${what}: ${ref.registry} refused access without a usable challenge`,
    );
  };
}

function basic(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
}
