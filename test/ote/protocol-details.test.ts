import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { normalizeDuration } from "../../src/ote/normalize-duration.ts";
import { runTests } from "../../src/ote/run-tests.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const RENAMING = "[sig-network] renames itself";
const NANOSECONDS = "[sig-network] reports nanoseconds";
const DETAILED = "[sig-network] explains itself";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeSampleBinary({
    suite: {
      component: "quirks",
      commit: "0".repeat(40),
      buildDate: "2026-01-01T00:00:00Z",
      tests: [
        { name: RENAMING, behavior: "wrong-name" },
        { name: NANOSECONDS, behavior: "nanoseconds", durationMs: [300, 300] },
        { name: DETAILED, durationMs: [1, 2], details: [{ name: "why", value: { nodes: ["a", "b"] } }] },
      ],
    },
    path: join(dir.path, "quirks-tests-ext"),
  });
});
afterAll(() => dir.remove());

const env = { ...process.env, SAMPLE_EXT_SEED: "quirks" };

describe("protocol details origin handles", () => {
  it("fails a test whose invocation reported a result for a name nobody requested", async () => {
    const [outcome] = (await runTests({ binary, names: [RENAMING], timeoutMs: 10_000, env })).outcomes;
    expect(outcome).toMatchObject({ name: RENAMING, result: "failed", harnessError: "unexpected-result" });
    expect(outcome?.error).toContain(`"${RENAMING} [renamed]" was not requested`);
    expect(outcome?.error).toContain("got no result");
  });

  it("turns a nanosecond duration into milliseconds", async () => {
    const [outcome] = (await runTests({ binary, names: [NANOSECONDS], timeoutMs: 10_000, env })).outcomes;
    expect(outcome?.result).toBe("passed");
    expect(outcome?.duration).toBeGreaterThanOrEqual(295);
    expect(outcome?.duration).toBeLessThan(2_000);
  });

  it("keeps details[] as the binary reported them", async () => {
    const [outcome] = (await runTests({ binary, names: [DETAILED], timeoutMs: 10_000, env })).outcomes;
    expect(outcome?.details).toEqual([{ name: "why", value: { nodes: ["a", "b"] } }]);
  });
});

describe("normalizeDuration", () => {
  const start = "2026-01-01 00:00:00.000000 UTC";
  const end = "2026-01-01 00:00:02.500000 UTC";

  it("keeps milliseconds that fit the span of the result", () => {
    expect(normalizeDuration({ duration: 2_400, startTime: start, endTime: end, observedMs: 9_000 })).toBe(
      2_400,
    );
  });

  it("scales nanoseconds that match the span down to milliseconds", () => {
    expect(
      normalizeDuration({ duration: 2_500_123_456, startTime: start, endTime: end, observedMs: 0 }),
    ).toBe(2_500);
  });

  it("falls back to the span for a duration that is neither, and to the observed time without timestamps", () => {
    expect(normalizeDuration({ duration: 90_000, startTime: start, endTime: end, observedMs: 0 })).toBe(
      2_500,
    );
    expect(normalizeDuration({ duration: 40_000_000_000, observedMs: 40_010 })).toBe(40_000);
    expect(normalizeDuration({ duration: 700_000, observedMs: 1_200 })).toBe(1_200);
  });
});
