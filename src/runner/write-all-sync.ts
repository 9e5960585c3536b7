import { writeSync } from "node:fs";

/** Writes all of `text` at the file's position, however many writes it takes. */
export function writeAllSync(fd: number, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
}
