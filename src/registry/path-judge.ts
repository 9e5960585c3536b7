import { posix } from "node:path";

/** What one layer says about a path, looking at it from above. */
export type LayerVerdict =
  | { kind: "file"; digest: string; size: number }
  | { kind: "link"; target: string }
  | { kind: "directory" }
  | { kind: "deleted"; by: string }
  | { kind: "absent" };

/** A tar entry as far as path lookups care: normalized name, type, link target. */
export interface LayerEntry {
  name: string;
  type: string;
  linkname?: string;
}

const WHITEOUT = ".wh.";
const OPAQUE = ".wh..wh..opq";

const isWithin = (path: string, dir: string) => dir === "" || path === dir || path.startsWith(`${dir}/`);
const parentOf = (name: string) => (posix.dirname(name) === "." ? "" : posix.dirname(name));

/** Where a link at `entry` pointing at `linkname` leads, inside the image root (like a chroot). */
function resolveLink(entry: string, linkname: string, hardlink: boolean): string {
  const joined = hardlink || linkname.startsWith("/") ? linkname : posix.join(posix.dirname(entry), linkname);
  return posix.normalize(`/${joined}`).replace(/^\/+/, "");
}

export interface PathJudge {
  /** Takes the next entry of the layer; true when it is the file itself, whose content decides. */
  see(entry: LayerEntry): boolean;
  /** The file's content was read: it is the verdict, unless a later entry says otherwise. */
  found(file: { digest: string; size: number }): void;
  verdict(): LayerVerdict;
}

/**
 * The rules by which a layer's entries, in order, decide what the layer says about `path`:
 * whiteouts (`.wh.NAME`) and opaque directories (`.wh..wh..opq`) over it or a directory above it,
 * the path itself as a file, link or directory, or a symlinked directory on the way to it.
 */
export function createPathJudge(path: string): PathJudge {
  let verdict: LayerVerdict = { kind: "absent" };
  let deletedBy: string | undefined;
  return {
    see({ name, type, linkname }) {
      const base = posix.basename(name);
      const dir = parentOf(name);
      if (base === OPAQUE && isWithin(path, dir) && path !== dir) deletedBy = name;
      else if (base.startsWith(WHITEOUT) && isWithin(path, posix.join(dir, base.slice(WHITEOUT.length))))
        deletedBy = name;
      if (name === path) {
        if (type === "file" || type === "contiguous-file") return true;
        if (type === "symlink" || type === "link")
          verdict = { kind: "link", target: resolveLink(name, linkname ?? "", type === "link") };
        else if (type === "directory") verdict = { kind: "directory" };
      } else if (path.startsWith(`${name}/`) && type === "symlink") {
        // A directory on the way is a symlink (e.g. /bin → usr/bin): follow it with the rest of the path.
        verdict = {
          kind: "link",
          target: resolveLink(name, posix.join(linkname ?? "", path.slice(name.length + 1)), false),
        };
      }
      return false;
    },
    found(file) {
      verdict = { kind: "file", ...file };
    },
    verdict() {
      return verdict.kind === "absent" && deletedBy !== undefined
        ? { kind: "deleted", by: deletedBy }
        : verdict;
    },
  };
}

/**
 * Whether an entry can bear on a path whose directory is `dir`: an entry of that directory, the
 * directory or one above it (a symlink on the way), or a whiteout in a directory above it. The
 * entries of a layer that concern a directory decide every path in it, so one read of a layer
 * shared by many images (a base layer) answers for all their paths in that directory.
 */
export function concernsDirectory(name: string, dir: string): boolean {
  const parent = parentOf(name);
  if (parent === dir || isWithin(dir, name)) return true;
  return posix.basename(name).startsWith(WHITEOUT) && isWithin(dir, parent);
}

/** The directory a path's lookups are listed under. */
export function directoryOf(path: string): string {
  return parentOf(path);
}
