import { constants, createReadStream } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { basename, resolve } from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { isWithin } from "@netstress/core/model/is-within.ts";
import { send } from "./send.ts";

/** A downloaded artifact runs nothing and loads nothing, even if a browser were to render it. */
export const ARTIFACT_POLICY = "sandbox; default-src 'none'";

/** How much of a file decides whether it is served as text. */
const SNIFF_BYTES = 1024;

/** Downloads served at once by one process; more wait for a 503 and try again. */
export const DEFAULT_MAX_DOWNLOADS = 16;

/** Counts downloads in flight; `take` says false when all slots are busy. */
export interface DownloadSlots {
  take(): boolean;
  give(): void;
}

export const downloadSlots = (max: number): DownloadSlots => {
  let busy = 0;
  return {
    take: () => busy < max && ++busy > 0,
    give: () => void (busy -= 1),
  };
};

const PROCESS_SLOTS = downloadSlots(DEFAULT_MAX_DOWNLOADS);

/**
 * Answers with a file a test binary wrote, when it is a regular file under `root` (resolved, and
 * again with symlinks followed): always as a download, `text/plain` when its first KiB is UTF-8
 * text and `application/octet-stream` otherwise, never sniffed by the browser. The file is
 * streamed from one open descriptor (what was checked is what is sent), so a download costs a
 * buffer, not the file; at most `slots` downloads run at once and the rest are told to retry.
 * False when there is nothing to serve.
 */
export async function sendArtifact(
  res: ServerResponse<IncomingMessage>,
  input: { root: string; file: string },
  slots: DownloadSlots = PROCESS_SLOTS,
): Promise<boolean> {
  const root = resolve(input.root);
  const file = resolve(input.file);
  if (!isWithin(root, file)) return false;
  const real = await Promise.all([realpath(root), realpath(file)]).catch(() => undefined);
  if (!real || !isWithin(real[0], real[1])) return false;
  // O_NOFOLLOW: the last component is no symlink; realpath above covered the directories.
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!handle) return false;
  let owned = true;
  try {
    const info = await handle.stat();
    if (!info.isFile()) return false;
    if (!slots.take()) {
      return send(res, 503, "text/plain; charset=utf-8", "too many downloads at once; try again shortly\n", {
        "retry-after": "5",
      });
    }
    const head = Buffer.alloc(Math.min(SNIFF_BYTES, info.size));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const name = basename(file);
    const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
    res.writeHead(200, {
      "content-type": isText(head.subarray(0, bytesRead))
        ? "text/plain; charset=utf-8"
        : "application/octet-stream",
      "content-length": String(info.size),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "content-disposition": `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
      "content-security-policy": ARTIFACT_POLICY,
    });
    owned = false;
    const body = createReadStream("", {
      fd: handle.fd,
      autoClose: false,
      start: 0,
      end: Math.max(0, info.size - 1),
    });
    try {
      if (info.size > 0) await pipeline(body, res);
      else res.end();
    } catch {
      // The reader went away; the descriptor and the slot are freed below.
      res.destroy();
    } finally {
      slots.give();
      await handle.close();
    }
    return true;
  } finally {
    if (owned) await handle.close();
  }
}

/** No NUL, and UTF-8 throughout (a character cut at the end of the sample is fine). */
function isText(sample: Buffer): boolean {
  if (sample.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(sample, { stream: true });
    return true;
  } catch {
    return false;
  }
}
