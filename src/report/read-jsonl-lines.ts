import { createReadStream } from "node:fs";
import { createJsonStringShrinker } from "./shrink-long-json-strings.ts";

export interface JsonlLine {
  /** 1-based line number in the file. */
  number: number;
  text: string;
  /** Some string values were cut because the line was longer than maxLineBytes. */
  shrunk: boolean;
}

export interface ReadJsonlOptions {
  /** Lines longer than this are read through the string shrinker instead of whole. */
  maxLineBytes?: number;
  /** Each string value of a shrunk line keeps this many bytes. */
  maxStringBytes?: number;
  /** A shrunk line that is still longer than this is reported as too long. */
  maxShrunkBytes?: number;
}

export type JsonlItem = JsonlLine | { number: number; tooLong: true };

const isBlank = (text: string) => text.length === 0 || (text.charCodeAt(0) <= 32 && text.trim() === "");

/**
 * Calls `onLine` for every non-blank line of a JSONL file, synchronously within each read chunk, so
 * that no line outlives its turn (lines held in batches would survive young-generation GCs and
 * cost far more to collect). Memory stays bounded by maxLineBytes whatever the file holds: an
 * oversized line is shrunk on the fly (see createJsonStringShrinker) rather than buffered, so a
 * record with a 100 MB output field is still read and counted.
 */
export async function forEachJsonlLine(
  path: string,
  onLine: (item: JsonlItem) => void,
  { maxLineBytes = 4 << 20, maxStringBytes = 64 << 10, maxShrunkBytes = 8 << 20 }: ReadJsonlOptions = {},
): Promise<void> {
  let number = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let shrinker: ReturnType<typeof createJsonStringShrinker> | null = null;

  function append(piece: Buffer): void {
    if (shrinker) {
      shrinker.write(piece);
      return;
    }
    pending.push(piece);
    pendingBytes += piece.length;
    if (pendingBytes > maxLineBytes) {
      shrinker = createJsonStringShrinker({ maxStringBytes });
      for (const buffered of pending) shrinker.write(buffered);
      pending = [];
      pendingBytes = 0;
    }
  }

  function finishLine(): void {
    number++;
    if (shrinker) {
      onLine(
        shrinker.size > maxShrunkBytes
          ? { number, tooLong: true }
          : { number, text: shrinker.text(), shrunk: true },
      );
      shrinker = null;
      return;
    }
    const text =
      pending.length === 1 ? pending[0]!.toString("utf8") : Buffer.concat(pending).toString("utf8");
    pending = [];
    pendingBytes = 0;
    if (!isBlank(text)) onLine({ number, text, shrunk: false });
  }

  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (let newline = chunk.indexOf(10, start); newline !== -1; newline = chunk.indexOf(10, start)) {
        if (pending.length === 0 && !shrinker && newline - start <= maxLineBytes) {
          number++;
          const text = chunk.toString("utf8", start, newline);
          if (!isBlank(text)) onLine({ number, text, shrunk: false });
        } else {
          append(chunk.subarray(start, newline));
          finishLine();
        }
        start = newline + 1;
      }
      // The rest of the chunk starts a line that continues in the next one; copy it, chunks are reused.
      if (start < chunk.length) append(Buffer.from(chunk.subarray(start)));
    }
    if (pending.length > 0 || shrinker) finishLine();
  } finally {
    stream.destroy();
  }
}
