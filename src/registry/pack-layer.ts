import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import { sha256Digest } from "./digest.ts";
import type { ImageFile } from "./read-image-directory.ts";

/** A layer ready to push: the gzipped tar, its digest and size, and the digest of the tar itself. */
export interface PackedLayer {
  mediaType: string;
  digest: string;
  size: number;
  bytes: Buffer;
  /** The uncompressed tar's digest: what the image config's `rootfs.diff_ids` lists. */
  diffId: string;
}

/**
 * A gzipped tar of the files (path → file), in path order, each keeping its mode and owner, with
 * the directories above them. Deterministic: the same files give the same bytes (mtime 0, no gzip
 * timestamp), so the same PR payload assembled twice has the same digest.
 */
export async function packLayer(options: {
  files: ReadonlyMap<string, ImageFile>;
  /** The layer media type (the base image's flavour: OCI or Docker). */
  mediaType: string;
}): Promise<PackedLayer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = new Promise<void>((resolve, reject) => {
    pack.on("data", (chunk: unknown) => void chunks.push(chunk as Buffer));
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  const names = [...options.files.keys()].sort();
  const directories = new Set<string>();
  for (const name of names) {
    const parts = name.split("/");
    for (let n = 1; n < parts.length; n++) directories.add(parts.slice(0, n).join("/"));
  }
  const mtime = new Date(0);
  for (const dir of [...directories].sort()) {
    pack.entry({ name: `${dir}/`, type: "directory", mode: 0o755, mtime, uid: 0, gid: 0 });
  }
  for (const name of names) {
    const file = options.files.get(name)!;
    pack.entry(
      {
        name,
        type: "file",
        mode: file.mode,
        uid: file.uid,
        gid: file.gid,
        ...(file.uname ? { uname: file.uname } : {}),
        ...(file.gname ? { gname: file.gname } : {}),
        mtime,
      },
      file.bytes,
    );
  }
  pack.finalize();
  await collected;
  const tarBytes = Buffer.concat(chunks);
  const bytes = gzipSync(tarBytes);
  return {
    mediaType: options.mediaType,
    digest: sha256Digest(bytes),
    size: bytes.length,
    bytes,
    diffId: sha256Digest(tarBytes),
  };
}
