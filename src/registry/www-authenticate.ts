export interface AuthChallenge {
  scheme: string;
  params: Record<string, string>;
}

/**
 * Parses a `WWW-Authenticate` header (RFC 7235) into its challenges, e.g.
 * `Bearer realm="https://auth.example/token",service="registry",scope="repository:a/b:pull"`.
 */
export function parseWwwAuthenticate(header: string): AuthChallenge[] {
  const challenges: AuthChallenge[] = [];
  const token = /\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)/y;
  const param = /\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?/y;
  let index = 0;
  while (index < header.length) {
    token.lastIndex = index;
    const scheme = token.exec(header);
    if (!scheme?.[1]) break;
    index = token.lastIndex;
    const params: Record<string, string> = {};
    for (;;) {
      param.lastIndex = index;
      const match = param.exec(header);
      if (!match?.[1]) break;
      // A bare token followed by a space starts the next challenge, not a parameter.
      params[match[1].toLowerCase()] =
        match[2] !== undefined ? match[2].replace(/\\(.)/g, "$1") : (match[3] ?? "");
      index = param.lastIndex;
    }
    challenges.push({ scheme: scheme[1].toLowerCase(), params });
    while (header[index] === "," || header[index] === " ") index++;
  }
  return challenges;
}
