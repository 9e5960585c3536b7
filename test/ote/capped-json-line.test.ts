import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CappedJsonLine } from "../../src/ote/capped-json-line.ts";

const limits = { stringEndChars: 40, maxStructureChars: 10_000 };

/** Feeds the line's bytes in the given piece sizes, as pipe reads split it. */
function capped(line: string, pieces: number[]): string | undefined {
  const bytes = Buffer.from(line, "utf8");
  const reader = new CappedJsonLine(limits);
  let at = 0;
  for (const size of pieces) {
    if (at >= bytes.length) break;
    reader.feed(bytes.subarray(at, at + size));
    at += size;
  }
  if (at < bytes.length) reader.feed(bytes.subarray(at));
  return reader.finish();
}

describe("CappedJsonLine", () => {
  it("keeps every field, and of a long string its head and tail, however the bytes are split", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 300 }),
        fc.string({ unit: "grapheme", maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 17 }), { maxLength: 200 }),
        (output, name, pieces) => {
          const line = JSON.stringify({
            name,
            duration: 12,
            result: "passed",
            output,
            details: [{ a: null }],
          });
          const parsed = JSON.parse(capped(line, pieces)!) as Record<string, unknown>;
          expect(parsed).toMatchObject({ name, duration: 12, result: "passed", details: [{ a: null }] });
          const kept = parsed.output as string;
          const marker = /\n… \[\d+ characters truncated\] …\n/.exec(kept);
          if (!marker) {
            expect(kept).toBe(output);
            return;
          }
          const head = kept.slice(0, marker.index);
          const tail = kept.slice(marker.index + marker[0].length);
          expect(output.startsWith(head)).toBe(true);
          expect(output.endsWith(tail)).toBe(true);
          expect(JSON.stringify(head).length).toBeLessThanOrEqual(limits.stringEndChars + 8);
          expect(JSON.stringify(tail).length).toBeLessThanOrEqual(limits.stringEndChars + 8);
        },
      ),
    );
  });

  it("reads a 9 MiB line in well under two seconds, keeping a few KiB", () => {
    const output = "I1102 09:14:00.000000 1 round_trippers.go:553] GET https://api/ 200 OK\n".repeat(140_000);
    const line = JSON.stringify({ name: "t", result: "passed", output });
    const reader = new CappedJsonLine({ stringEndChars: 4096, maxStructureChars: 1024 });
    const bytes = Buffer.from(line);
    const started = performance.now();
    for (let at = 0; at < bytes.length; at += 65_536) reader.feed(bytes.subarray(at, at + 65_536));
    const text = reader.finish()!;
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(text.length).toBeLessThan(10_000);
    expect(JSON.parse(text)).toMatchObject({ name: "t", result: "passed" });
  });

  it("gives up on a line whose structure alone is larger than allowed", () => {
    const line = JSON.stringify({
      name: "t",
      result: "passed",
      details: Array.from({ length: 5_000 }, (_, i) => i),
    });
    expect(capped(line, [])).toBeUndefined();
  });
});
