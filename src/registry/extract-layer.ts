import type { Readable } from "node:stream";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import tar from "tar-stream";
import { createDigestVerifier } from "./digest.ts";
import type { Descriptor } from "./manifest.ts";
import { normalizeImagePath } from "./normalize-image-path.ts";
import { RegistryError } from "./registry-error.ts";

/** One entry of a layer: its normalized path, its tar header, and its content. */
export interface ExtractedEntry {
  name: string;
  header: tar.Header;
  /** The entry's content; a handler that does not read it leaves it to be skipped. */
  content: AsyncIterable<Buffer>;
}

/**
 * Streams one layer (gzip or plain tar) entry by entry, in order. The whole layer is read and
 * checked against its digest (and size) before the call succeeds, and the decompressed size is
 * capped so that a gzip bomb stops early. `onEntry` returns a promise when it reads the content
 * (the next entry waits for it); an error it throws fails the layer.
 */
export async function extractLayer(options: {
  source: Readable;
  layer: Descriptor;
  maxDecompressedBytes: number;
  what: string;
  onEntry: (entry: ExtractedEntry) => Promise<void> | void;
}): Promise<void> {
  const { what } = options;
  const { mediaType } = options.layer;
  if (/zstd/.test(mediaType)) {
    throw new RegistryError("unsupported-media-type", `${what}: zstd-compressed layers are not supported`);
  }
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
    const skip = (error?: unknown) => {
      if (error) {
        stream.resume();
        next(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      stream.on("end", () => next());
      stream.resume();
    };
    let reading: Promise<void> | void;
    try {
      const name = normalizeImagePath(header.name, what);
      // streamx readables are async iterable at run time; their typings just do not say so.
      reading = options.onEntry({ name, header, content: stream as unknown as AsyncIterable<Buffer> });
    } catch (error) {
      skip(error);
      return;
    }
    if (!reading) skip();
    else reading.then(() => next(), skip);
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
      { cause: error },
    );
  }
}
