import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodePayloadCounts, encodePayloadCounts } from "../../src/history/payload-counts-codec.ts";

/** Executions, failures, flakes and clusters per test, interleaved. */
const interleaved = (tests: [number, number, number, number][]) => Uint32Array.from(tests.flat());

describe("payload counts encoding", () => {
  it("stores a typical payload in about a byte per test", () => {
    // 5,000 tests of 30 iterations on 3 clusters, a few failing.
    const counts = interleaved(Array.from({ length: 5000 }, (_, i) => [30, i % 50 === 0 ? 2 : 0, 0, 3]));
    const blob = encodePayloadCounts({ gen: 3, counts });
    expect(blob.length).toBe(16 + 5000);
    expect(decodePayloadCounts(blob)).toEqual({ gen: 3, counts });
  });

  it("keeps tests that did not run, ran a different number of times, flaked or failed often", () => {
    const counts = interleaved([
      [10, 0, 0, 2],
      [0, 0, 0, 0],
      [12, 3, 0, 2],
      [10, 1, 2, 2],
      [300, 290, 0, 2],
      [10, 0, 0, 5],
      [2 ** 32 - 1, 2 ** 31, 2 ** 31 - 1, 7],
    ]);
    expect(decodePayloadCounts(encodePayloadCounts({ gen: 0, counts }))).toEqual({ gen: 0, counts });
  });

  it("round-trips any counts", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 2 ** 32 - 1 }),
        fc.array(
          fc.oneof(
            fc.constant<[number, number, number, number]>([0, 0, 0, 0]),
            fc
              .integer({ min: 1, max: 2 ** 32 - 1 })
              .chain((runs) =>
                fc
                  .integer({ min: 0, max: runs })
                  .chain((failures) =>
                    fc.tuple(
                      fc.constant(runs),
                      fc.constant(failures),
                      fc.integer({ min: 0, max: runs - failures }),
                      fc.nat({ max: 1000 }),
                    ),
                  ),
              ),
          ),
          { maxLength: 300 },
        ),
        (gen, tests) => {
          const counts = interleaved(tests);
          expect(decodePayloadCounts(encodePayloadCounts({ gen, counts }))).toEqual({ gen, counts });
        },
      ),
    );
  });
});
