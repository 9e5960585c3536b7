import { createHash, timingSafeEqual } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";

/** Tokens shorter than this are ignored: a gate decides what ships. */
export const MINIMUM_TOKEN_LENGTH = 16;

export interface TokenSource {
  /** SHA-256 digests of the tokens that are valid now. */
  digests(): Promise<readonly Buffer[]>;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** Tokens of a file's text: one per line; blank lines and lines starting with # are skipped. */
export function parseTokens(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith("#"));
}

/**
 * Gate tokens from a mounted secret: a file, or a directory whose every visible file holds tokens
 * (a Kubernetes Secret volume; its `..data` bookkeeping entries start with a dot). Read again at
 * most every `refreshMs`, so a rotated secret takes effect without a restart. Only digests are kept.
 */
export function createFileTokenSource(options: {
  path: string;
  refreshMs?: number;
  now?: () => number;
  log?: Logger;
}): TokenSource {
  const { path, refreshMs = 10_000, now = Date.now, log } = options;
  let cached: { at: number; digests: Buffer[] } | undefined;

  async function load(): Promise<Buffer[]> {
    const files = (await stat(path)).isDirectory()
      ? (await readdir(path)).filter((name) => !name.startsWith(".")).map((name) => join(path, name))
      : [path];
    const tokens: string[] = [];
    for (const file of files) {
      if (!(await stat(file)).isFile()) continue;
      for (const token of parseTokens(await readFile(file, "utf8"))) {
        if (token.length < MINIMUM_TOKEN_LENGTH) {
          log?.warn({ file }, `a gate token shorter than ${MINIMUM_TOKEN_LENGTH} characters is ignored`);
        } else {
          tokens.push(token);
        }
      }
    }
    return tokens.map(digest);
  }

  return {
    async digests() {
      if (!cached || now() - cached.at >= refreshMs) {
        try {
          cached = { at: now(), digests: await load() };
        } catch (error) {
          // Keep serving the tokens read last; with none read yet, nobody is let in.
          log?.error({ err: error, path }, "gate tokens cannot be read");
          cached = { at: now(), digests: cached?.digests ?? [] };
        }
      }
      return cached.digests;
    },
  };
}

/**
 * Whether an Authorization header carries one of the tokens. The presented token is hashed and its
 * digest compared with every token's digest with timingSafeEqual: equal lengths always, every token
 * compared, so neither the length nor the first differing byte shows in the time taken.
 */
export function bearerMatches(
  authorization: string | undefined,
  digests: readonly Buffer[],
  compare: (a: Buffer, b: Buffer) => boolean = timingSafeEqual,
): boolean {
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match) return false;
  const presented = digest(match[1]!);
  let found = false;
  for (const known of digests) found = compare(presented, known) || found;
  return found;
}
