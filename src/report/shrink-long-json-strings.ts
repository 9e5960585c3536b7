const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LETTER_U = 0x75;

/**
 * Rewrites a JSON text, arriving in chunks, so that every string value keeps at most `maxStringBytes`
 * bytes and ends with a note of how much was cut. This is how a record with a 100 MB `output` is
 * still read — its other fields intact — without ever holding the 100 MB. Cuts fall on character
 * boundaries and never inside an escape sequence, so the result stays valid JSON.
 */
export function createJsonStringShrinker({ maxStringBytes }: { maxStringBytes: number }) {
  const pieces: Buffer[] = [];
  let outputBytes = 0;
  let inString = false;
  let dropping = false;
  let copied = 0;
  let dropped = 0;
  /** -1: the byte after a backslash is next; n > 0: hex digits of \uXXXX still to come. */
  let escapeRemaining = 0;

  function write(chunk: Buffer): void {
    const out = Buffer.allocUnsafe(chunk.length);
    let length = 0;
    for (const byte of chunk) {
      if (!inString) {
        out[length++] = byte;
        if (byte === QUOTE) {
          inString = true;
          dropping = false;
          copied = 0;
          dropped = 0;
        }
        continue;
      }
      if (escapeRemaining !== 0) {
        if (dropping) dropped++;
        else out[length++] = byte;
        escapeRemaining = escapeRemaining === -1 ? (byte === LETTER_U ? 4 : 0) : escapeRemaining - 1;
        continue;
      }
      if (byte === QUOTE) {
        if (dropping) {
          const note = Buffer.from(` [… ${dropped} bytes cut]"`);
          pieces.push(out.subarray(0, length), note);
          outputBytes += length + note.length;
          length = 0;
        } else {
          out[length++] = byte;
        }
        inString = false;
        continue;
      }
      // Start dropping only at the first byte of a character (not a UTF-8 continuation byte).
      if (!dropping && copied >= maxStringBytes && (byte & 0xc0) !== 0x80) dropping = true;
      if (byte === BACKSLASH) escapeRemaining = -1;
      if (dropping) dropped++;
      else {
        out[length++] = byte;
        copied++;
      }
    }
    const kept = Buffer.from(out.subarray(0, length));
    pieces.push(kept);
    outputBytes += kept.length;
  }

  return {
    write,
    /** Bytes kept so far, to refuse lines that stay huge after shrinking (millions of short strings). */
    get size(): number {
      return outputBytes;
    },
    text(): string {
      return Buffer.concat(pieces).toString("utf8");
    },
  };
}
