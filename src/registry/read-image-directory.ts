import { posix } from "node:path";
import type { Readable } from "node:stream";
import { extractLayer } from "./extract-layer.ts";
import type { Descriptor } from "./manifest.ts";
import { RegistryError } from "./registry-error.ts";

/** A regular file of an image, with what its tar header says about it. */
export interface ImageFile {
  bytes: Buffer;
  mode: number;
  uid: number;
  gid: number;
  uname?: string;
  gname?: string;
}

const WHITEOUT = ".wh.";
const OPAQUE = ".wh..wh..opq";
const within = (path: string, dir: string) => dir === "" || path === dir || path.startsWith(`${dir}/`);

/**
 * The regular files under `dir` as an image's layers (bottom first) leave them: each layer's
 * whiteouts (`.wh.NAME`) and opaque directories (`.wh..wh..opq`) hide what the layers below put
 * there, and anything else it puts at a path (a file, a link, a directory replacing an ancestor)
 * replaces what was there. Links are not followed: the directory's files are what it holds.
 * Every layer is read whole and checked against its digest.
 */
export async function readImageDirectory(options: {
  layers: readonly Descriptor[];
  open: (layer: Descriptor) => Promise<Readable>;
  dir: string;
  maxDecompressedBytes: number;
  /** Bytes of files kept at most, all together. */
  maxBytes: number;
  what: string;
}): Promise<Map<string, ImageFile>> {
  const dir = options.dir.replace(/^\/+|\/+$/g, "");
  const files = new Map<string, ImageFile>();
  let kept = 0;
  for (const layer of options.layers) {
    /** Paths hidden below this layer: the path and everything under it, or (opaque) only what is under it. */
    const hidden: Array<{ path: string; opaque: boolean }> = [];
    const added = new Map<string, ImageFile | undefined>();
    const what = `${options.what}, layer ${layer.digest}`;
    await extractLayer({
      source: await options.open(layer),
      layer,
      maxDecompressedBytes: options.maxDecompressedBytes,
      what,
      onEntry: async ({ name, header, content }) => {
        const base = posix.basename(name);
        const parent = posix.dirname(name) === "." ? "" : posix.dirname(name);
        if (base === OPAQUE) {
          if (within(parent, dir) || within(dir, parent)) hidden.push({ path: parent, opaque: true });
          return;
        }
        if (base.startsWith(WHITEOUT)) {
          const target = posix.join(parent, base.slice(WHITEOUT.length));
          if (within(target, dir) || within(dir, target)) hidden.push({ path: target, opaque: false });
          return;
        }
        const type = header.type ?? "file";
        if (!within(name, dir)) return;
        if (name === dir || type === "directory") {
          // The directory itself replaced by something else hides all that was in it.
          if (type !== "directory") hidden.push({ path: name, opaque: false });
          return;
        }
        if (type !== "file" && type !== "contiguous-file") {
          added.set(name, undefined);
          return;
        }
        const chunks: Buffer[] = [];
        for await (const chunk of content) {
          kept += chunk.length;
          if (kept > options.maxBytes) {
            throw new RegistryError(
              "too-large",
              `${what}: /${dir} holds more than the ${options.maxBytes} bytes allowed`,
            );
          }
          chunks.push(chunk);
        }
        added.set(name, {
          bytes: Buffer.concat(chunks),
          mode: header.mode ?? 0o644,
          uid: header.uid ?? 0,
          gid: header.gid ?? 0,
          ...(header.uname ? { uname: header.uname } : {}),
          ...(header.gname ? { gname: header.gname } : {}),
        });
      },
    });
    // Whiteouts hide the layers below only; then this layer's own entries land.
    for (const { path, opaque } of hidden) {
      for (const name of files.keys()) {
        if (opaque ? name !== path && within(name, path) : within(name, path)) files.delete(name);
      }
    }
    for (const [name, file] of added) {
      if (file) files.set(name, file);
      else files.delete(name);
    }
  }
  return files;
}
