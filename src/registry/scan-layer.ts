import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { once } from "node:events";
import { extractLayer } from "./extract-layer.ts";
import type { Descriptor } from "./manifest.ts";
import { concernsDirectory, createPathJudge, type LayerEntry, type LayerVerdict } from "./path-judge.ts";
import { RegistryError } from "./registry-error.ts";

/**
 * Streams one layer (gzip or plain tar) and reports what it holds at `path`, writing the file to
 * `filePath` (when given) if it is there. The whole layer is read and checked against its digest before the
 * verdict counts; decompressed size and file size are capped so that a gzip bomb stops early.
 * With `listDirectory`, it also returns the entries that concern that directory, in order.
 */
export async function scanLayer(options: {
  source: Readable;
  layer: Descriptor;
  path: string;
  /** Where to put the file; without it, the file is only hashed. */
  filePath?: string;
  maxDecompressedBytes: number;
  maxFileBytes: number;
  listDirectory?: string;
  what: string;
}): Promise<{ verdict: LayerVerdict; listing?: LayerEntry[] }> {
  const { path, what } = options;
  const judge = createPathJudge(path);
  const { listDirectory } = options;
  const listing: LayerEntry[] = [];
  await extractLayer({
    source: options.source,
    layer: options.layer,
    maxDecompressedBytes: options.maxDecompressedBytes,
    what,
    onEntry: ({ name, header, content }) => {
      const entry: LayerEntry = {
        name,
        type: header.type ?? "file",
        ...(header.linkname ? { linkname: header.linkname } : {}),
      };
      if (listDirectory !== undefined && concernsDirectory(name, listDirectory)) listing.push(entry);
      if (!judge.see(entry)) return;
      if (header.size !== undefined && header.size > options.maxFileBytes) {
        throw new RegistryError(
          "too-large",
          `${what}: /${path} is ${header.size} bytes, more than the ${options.maxFileBytes} allowed`,
        );
      }
      return writeEntry(content, options.filePath).then((file) => judge.found(file));
    },
  });
  return { verdict: judge.verdict(), ...(listDirectory !== undefined ? { listing } : {}) };
}

async function writeEntry(
  stream: AsyncIterable<Buffer>,
  filePath: string | undefined,
): Promise<{ digest: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  const out = filePath ? createWriteStream(filePath) : undefined;
  try {
    for await (const chunk of stream) {
      hash.update(chunk);
      size += chunk.length;
      if (out && !out.write(chunk)) await once(out, "drain");
    }
    if (out) {
      out.end();
      await finished(out);
    }
  } finally {
    out?.destroy();
  }
  return { digest: `sha256:${hash.digest("hex")}`, size };
}
