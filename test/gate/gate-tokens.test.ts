import { createHash, timingSafeEqual } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bearerMatches, parseTokens } from "../../src/gate/gate-tokens.ts";

const digest = (token: string) => createHash("sha256").update(token).digest();
const TOKENS = [
  "first-token-0123456789abcdef",
  "second-token-fedcba9876543210",
  "third-token-with-some-length",
];

describe("gate token comparison", () => {
  it("compares fixed-length digests with every token, wherever and whether the presented one differs", () => {
    const digests = TOKENS.map(digest);
    const presented = [
      TOKENS[0]!,
      TOKENS[2]!,
      "x",
      "f",
      `${TOKENS[1]!}${"y".repeat(10_000)}`,
      TOKENS[1]!.slice(0, -1),
      `X${TOKENS[0]!.slice(1)}`,
    ];
    for (const token of presented) {
      const calls: [number, number][] = [];
      const matched = bearerMatches(`Bearer ${token}`, digests, (a, b) => {
        calls.push([a.length, b.length]);
        return timingSafeEqual(a, b);
      });
      expect(matched, token.slice(0, 30)).toBe(TOKENS.includes(token));
      // The same work for a match, a near miss, a one-character or a 10 kB token: one 32-byte
      // comparison per known token, never stopping at the first match.
      expect(calls, token.slice(0, 30)).toEqual([
        [32, 32],
        [32, 32],
        [32, 32],
      ]);
    }
  });

  it("refuses headers that are not a bearer token without comparing anything", () => {
    for (const header of [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      "Basic dXNlcjpwYXNz",
      `Token ${TOKENS[0]}`,
      `Bearer ${TOKENS[0]} extra`,
    ]) {
      let compared = false;
      expect(bearerMatches(header, TOKENS.map(digest), () => (compared = true))).toBe(false);
      expect(compared).toBe(false);
    }
  });

  it("reads one token per line, skipping blank lines and comments", () => {
    expect(parseTokens("# release team\r\n  token-one  \n\n#token-two\ntoken-three\n")).toEqual([
      "token-one",
      "token-three",
    ]);
  });
});
