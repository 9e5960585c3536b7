import { StringDecoder } from "node:string_decoder";

export interface CappedJsonLineLimits {
  /** Characters kept of each end of a long string value (its JSON-escaped text). */
  stringEndChars: number;
  /** Everything outside string values (keys' quotes, numbers, brackets): past this the line is given up. */
  maxStructureChars: number;
}

/**
 * Reads one JSON line of any size as it streams in, keeping its structure and every string value
 * but only the head and tail of long ones (a many-MiB `output`), with a note of how much was cut:
 * a verbose test's result is read without holding the line. Nothing is validated here; the text it
 * returns goes to JSON.parse like any other line. Whitespace outside strings is dropped.
 */
export class CappedJsonLine {
  private readonly decoder = new StringDecoder("utf8");
  private readonly parts: string[] = [];
  private structureChars = 0;
  private gaveUp = false;
  private inString = false;
  /** An escape sequence read so far (`\` and one character, or `\u` and four): kept whole. */
  private escape: string | undefined;
  private head = "";
  /** Always starts where an escape sequence starts or a character does. */
  private tail = "";
  private cut = 0;

  constructor(private readonly limits: CappedJsonLineLimits) {}

  feed(bytes: Buffer): void {
    if (this.gaveUp) return;
    const text = this.decoder.write(bytes);
    let i = 0;
    while (i < text.length && !this.gaveUp)
      i = this.inString ? this.readString(text, i) : this.readStructure(text, i);
  }

  /** The line with long strings cut, or undefined when its structure alone was too large. */
  finish(): string | undefined {
    this.feed(Buffer.alloc(0));
    const rest = this.decoder.end();
    if (rest) this.feed(Buffer.from(rest, "utf8"));
    if (this.gaveUp) return undefined;
    if (this.inString) this.closeString();
    return this.parts.join("");
  }

  private readStructure(text: string, from: number): number {
    let i = from;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (c === '"') {
        this.inString = true;
        return i + 1;
      }
      if (c === " " || c === "\t" || c === "\r" || c === "\n") continue;
      this.parts.push(c);
      if (++this.structureChars > this.limits.maxStructureChars) {
        this.gaveUp = true;
        return text.length;
      }
    }
    return i;
  }

  private readString(text: string, from: number): number {
    let i = from;
    // Searched again only once passed: a log's many `\n` escapes must not rescan to a far quote.
    let quote = -2;
    let backslash = -2;
    while (i < text.length) {
      if (this.escape !== undefined) {
        this.escape += text[i++];
        const complete = this.escape.length === (this.escape[1] === "u" ? 6 : 2);
        if (complete) {
          this.appendToken(this.escape);
          this.escape = undefined;
        }
        continue;
      }
      if (quote !== -1 && quote < i) quote = text.indexOf('"', i);
      if (backslash !== -1 && backslash < i) backslash = text.indexOf("\\", i);
      const end = quote === -1 ? text.length : quote;
      const stop = backslash !== -1 && backslash < end ? backslash : end;
      if (stop > i) this.appendPlain(text.slice(i, stop));
      if (stop === text.length) return stop;
      if (stop === backslash) {
        this.escape = "\\";
        i = stop + 1;
        continue;
      }
      this.closeString();
      return stop + 1;
    }
    return i;
  }

  /** Plain characters: each may start a piece of the tail, except a surrogate pair's second half. */
  private appendPlain(text: string): void {
    let rest = text;
    const room = this.limits.stringEndChars - this.head.length;
    if (this.tail === "" && room > 0) {
      let take = Math.min(room, rest.length);
      if (isLowSurrogate(rest.charCodeAt(take))) take -= 1;
      this.head += rest.slice(0, take);
      rest = rest.slice(take);
    }
    if (rest === "") return;
    this.tail += rest;
    if (this.tail.length > 2 * this.limits.stringEndChars) this.trimTail();
  }

  /** A whole escape sequence: it goes to the head or to the tail, never split. */
  private appendToken(token: string): void {
    if (this.tail === "" && this.head.length < this.limits.stringEndChars) this.head += token;
    else {
      this.tail += token;
      if (this.tail.length > 2 * this.limits.stringEndChars) this.trimTail();
    }
  }

  /** Drops the tail's oldest whole tokens until stringEndChars are left. */
  private trimTail(): void {
    const keep = this.limits.stringEndChars;
    let i = 0;
    while (this.tail.length - i > keep) {
      if (this.tail[i] === "\\") i += this.tail[i + 1] === "u" ? 6 : 2;
      else i += isHighSurrogate(this.tail.charCodeAt(i)) ? 2 : 1;
    }
    this.cut += i;
    this.tail = this.tail.slice(i);
  }

  private closeString(): void {
    // An escape the line ended in: what JSON.parse makes of it is its concern.
    if (this.escape !== undefined) this.appendToken(this.escape);
    this.escape = undefined;
    const note = this.cut > 0 ? `\\n… [${this.cut} characters truncated] …\\n` : "";
    this.parts.push(`"${this.head}${note}${this.tail}"`);
    this.inString = false;
    this.head = "";
    this.tail = "";
    this.cut = 0;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
