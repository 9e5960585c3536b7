/**
 * Keeps the head and tail of a long text (where test output usually says what went wrong) and
 * names how much was cut in between.
 */
export function capText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const half = Math.floor(maxChars / 2);
  const cut = text.length - 2 * half;
  return `${text.slice(0, half)}\n… [${cut} characters truncated] …\n${text.slice(text.length - half)}`;
}
