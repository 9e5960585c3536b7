import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { Transform, type Readable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";
import { once } from "node:events";
import { createGunzip } from "node:zlib";
import tar from "tar-stream";
import { createDigestVerifier } from "./digest.ts";
import type { Descriptor } from "./manifest.ts";
import { concernsDirectory, createPathJudge, type LayerEntry, type LayerVerdict } from "./path-judge.ts";
import { RegistryError } from "./registry-error.ts";

/** `./usr/bin/x`, `/usr/bin/x` and `usr//bin/x` all name `usr/bin/x`; `..` is refused outright. */
export function normalizeImagePath(name: string, what: string): string {
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) {
    throw new RegistryError(
      "unsafe-path",
      `${what}: entry "${name}" escapes the image root with "..": refusing the layer`,
    );
  }
  return parts.join("/");
}

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
  const { mediaType } = options.layer;
  if (/zstd/.test(mediaType)) {
    throw new RegistryError("unsupported-media-type", `${what}: zstd-compressed layers are not supported`);
  }
  const judge = createPathJudge(path);
  const { listDirectory } = options;
  const listing: LayerEntry[] = [];
  let decompressed = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      decompressed += chunk.length;
      if (decompressed > options.maxDecompressedBytes) {
        callback(
          new RegistryError(
            "too-large",
            `${what}: decompresses to more than ${options.maxDecompressedBytes} bytes; refusing it (gzip bomb?)`,
          ),
        );
      } else callback(null, chunk);
    },
  });
  const extract = tar.extract();
  extract.on("entry", (header, stream, next) => {
    // Failing the extract destroys the current entry with the same error; the pipeline reports it.
    stream.on("error", () => {});
    const done = (error?: unknown) =>
      error ? next(error instanceof Error ? error : new Error(String(error))) : next();
    let name: string;
    try {
      name = normalizeImagePath(header.name, what);
    } catch (error) {
      stream.resume();
      done(error);
      return;
    }
    const entry: LayerEntry = {
      name,
      type: header.type ?? "file",
      ...(header.linkname ? { linkname: header.linkname } : {}),
    };
    if (listDirectory !== undefined && concernsDirectory(name, listDirectory)) listing.push(entry);
    if (judge.see(entry)) {
      if (header.size !== undefined && header.size > options.maxFileBytes) {
        stream.resume();
        done(
          new RegistryError(
            "too-large",
            `${what}: /${path} is ${header.size} bytes, more than the ${options.maxFileBytes} allowed`,
          ),
        );
        return;
      }
      // streamx readables are async iterable at run time; their typings just do not say so.
      writeEntry(stream as unknown as AsyncIterable<Buffer>, options.filePath).then((file) => {
        judge.found(file);
        done();
      }, done);
      return;
    }
    stream.on("end", () => done());
    stream.resume();
  });

  const verifier = createDigestVerifier({ expected: options.layer.digest, size: options.layer.size, what });
  // 64 KiB output chunks: each chunk is a thread-pool round trip, and the default 16 KiB makes four times as many.
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  const stages: NodeJS.ReadWriteStream[] = /gzip/.test(mediaType) ? [gunzip, limiter] : [limiter];
  try {
    await pipeline([options.source, verifier, ...stages, extract]);
  } catch (error) {
    if (error instanceof RegistryError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new RegistryError(
      "corrupt-layer",
      `${what}: not a valid ${/gzip/.test(mediaType) ? "gzip-compressed " : ""}tar: ${message}`,
      {
        cause: error,
      },
    );
  }
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
