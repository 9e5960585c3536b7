const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LETTER_U = 0x75;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * Rewrites a JSON text, arriving in chunks, so that every string value (never a key) keeps at most
 * `maxStringBytes` bytes and ends with a note of how much was cut. This is how a record with a 100 MB `output` is
 * still read — its other fields intact — without ever holding the 100 MB. Cuts fall on character
 * boundaries and never inside an escape sequence, so the result stays valid JSON.
 */
export function createJsonStringShrinker({ maxStringBytes }: { maxStringBytes: number }) {
  const pieces: Buffer[] = [];
  let outputBytes = 0;
  let inString = false;
  /** Whether each open container is an object, innermost last; a string right after { or , in an object is a key. */
  const containers: boolean[] = [];
  let expectKey = false;
  let isKey = false;
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
          isKey = expectKey;
          expectKey = false;
          dropping = false;
          copied = 0;
          dropped = 0;
        } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
          containers.push(byte === OPEN_OBJECT);
          expectKey = byte === OPEN_OBJECT;
        } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
          containers.pop();
        } else if (byte === COMMA) {
          expectKey = containers.at(-1) === true;
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
      if (!dropping && !isKey && copied >= maxStringBytes && (byte & 0xc0) !== 0x80) dropping = true;
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
