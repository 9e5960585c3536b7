import { lstat, readFile, realpath } from "node:fs/promises";
import { basename, resolve } from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isWithin } from "./is-within.ts";
import { send } from "./send.ts";

/** A downloaded artifact runs nothing and loads nothing, even if a browser were to render it. */
export const ARTIFACT_POLICY = "sandbox; default-src 'none'";

/**
 * Answers with a file a test binary wrote, when it is a regular file under `root` (resolved, and
 * again with symlinks followed): always as a download, `text/plain` when it is UTF-8 text and
 * `application/octet-stream` otherwise, never sniffed. False when there is nothing to serve.
 */
export async function sendArtifact(
  res: ServerResponse<IncomingMessage>,
  input: { root: string; file: string },
): Promise<boolean> {
  const root = resolve(input.root);
  const file = resolve(input.file);
  if (!isWithin(root, file)) return false;
  const info = await lstat(file).catch(() => undefined);
  if (!info?.isFile()) return false;
  const real = await Promise.all([realpath(root), realpath(file)]).catch(() => undefined);
  if (!real || !isWithin(real[0], real[1])) return false;
  const body = await readFile(file).catch(() => undefined);
  if (!body) return false;
  const name = basename(file);
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return send(res, 200, isText(body) ? "text/plain; charset=utf-8" : "application/octet-stream", body, {
    "content-disposition": `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    "content-security-policy": ARTIFACT_POLICY,
  });
}

function isText(body: Buffer): boolean {
  if (body.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(body);
    return true;
  } catch {
    return false;
  }
}
