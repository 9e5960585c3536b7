/** Escapes what would break a table cell or turn a test name into markup. */
export function markdownCell(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .replace(/[\\`*_{}[\]<>|~#!]/g, (character) => `\\${character}`)
    .trim();
}
