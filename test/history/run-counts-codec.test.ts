import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeRunCounts, encodeRunCounts } from "../../src/history/run-counts-codec.ts";

const interleaved = (pairs: [number, number][]) => Uint16Array.from(pairs.flat());

describe("run counts encoding", () => {
  it("stores a typical stress run in about a byte per test", () => {
    // 5,000 tests of 10 iterations, a few failing.
    const counts = interleaved(Array.from({ length: 5000 }, (_, i) => [10, i % 50 === 0 ? 9 : 10]));
    const blob = encodeRunCounts({ gen: 3, counts });
    expect(blob.length).toBe(10 + 5000);
    expect(decodeRunCounts(blob)).toEqual({ gen: 3, counts });
  });

  it("keeps tests that did not run, ran a different number of times or failed often", () => {
    const counts = interleaved([
      [10, 10],
      [0, 0],
      [12, 3],
      [300, 0],
      [10, 0],
      [65535, 65535],
    ]);
    expect(decodeRunCounts(encodeRunCounts({ gen: 0, counts }))).toEqual({ gen: 0, counts });
  });

  it("round-trips any counts", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 2 ** 32 - 1 }),
        fc.array(
          fc.oneof(
            fc.constant<[number, number]>([0, 0]),
            fc
              .integer({ min: 1, max: 65535 })
              .chain((runs) => fc.tuple(fc.constant(runs), fc.integer({ min: 0, max: runs }))),
          ),
          { maxLength: 300 },
        ),
        (gen, pairs) => {
          const counts = interleaved(pairs);
          expect(decodeRunCounts(encodeRunCounts({ gen, counts }))).toEqual({ gen, counts });
        },
      ),
    );
  });
});
