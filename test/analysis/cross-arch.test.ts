import { describe, expect, it } from "vitest";
import { crossArchDifferences } from "../../src/analysis/cross-arch.ts";
import type { PayloadCounts } from "../../src/analysis/payload-counts.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { baseRate, simulatePayloadHistory, testName } from "./payload-history-simulation.ts";

const TEST = "[sig-network] egress IPs are kept across node reboots";

/** A history of one test on one arch: failed iterations of 30 per payload. */
function historyOf(failed: readonly number[]): PayloadCounts[] {
  return failed.map((count, index) => ({
    release: `4.19.0-0.nightly-${index}`,
    payload: `quay.io/ocp/release@sha256:${String(index).padStart(64, "0")}`,
    recordedAt: new Date(Date.UTC(2026, 10, index + 1)).toISOString(),
    runs: 1,
    tests: { [TEST]: { executions: 30, failures: count, flakes: 0 } },
  }));
}
const newest = historyOf([0, 0, 0, 0, 0, 0, 0])[6]!.payload;

describe("cross-arch consistency on one payload", () => {
  it("names a test that failed far more often on one arch, with both counts", () => {
    const result = crossArchDifferences({
      payload: newest,
      histories: [
        { arch: "amd64", history: historyOf([0, 1, 0, 0, 1, 0, 0]) },
        { arch: "arm64", history: historyOf([0, 0, 1, 0, 0, 0, 14]) },
      ],
    });
    expect(result.arches).toEqual(["amd64", "arm64"]);
    expect(result.findings).toEqual([
      expect.objectContaining({
        test: TEST,
        arch: "arm64",
        counts: { executions: 30, failures: 14 },
        others: { executions: 30, failures: 0 },
      }),
    ]);
  });

  it("allows for how much payloads differ on an arch anyway: a test whose runs swing is not flagged for one swing", () => {
    const swinging = [0, 9, 0, 0, 12, 0, 1, 10, 0, 0];
    const result = crossArchDifferences({
      payload: historyOf(swinging)[9]!.payload,
      histories: [
        { arch: "amd64", history: historyOf([...swinging.slice(0, 9), 0]) },
        { arch: "arm64", history: historyOf([...swinging.slice(0, 9), 10]) },
      ],
    });
    expect(result.findings).toEqual([]);
    // The same counts from steady histories are a difference.
    const steady = crossArchDifferences({
      payload: historyOf(swinging)[9]!.payload,
      histories: [
        { arch: "amd64", history: historyOf([0, 0, 1, 0, 0, 0, 0, 1, 0, 0]) },
        { arch: "arm64", history: historyOf([0, 1, 0, 0, 0, 1, 0, 0, 0, 10]) },
      ],
    });
    expect(steady.findings.map((f) => f.arch)).toEqual(["arm64"]);
  });

  it("judges nothing with one arch, or without enough history to know how payloads differ", () => {
    const one = crossArchDifferences({
      payload: newest,
      histories: [{ arch: "amd64", history: historyOf([0, 0, 0, 0, 0, 0, 9]) }],
    });
    expect(one.notJudged).toMatch(/1 arch/);
    const young = crossArchDifferences({
      payload: historyOf([0, 0])[1]!.payload,
      histories: [
        { arch: "amd64", history: historyOf([0, 0]) },
        { arch: "arm64", history: historyOf([0, 20]) },
      ],
    });
    expect(young).toMatchObject({ findings: [], notJudged: expect.stringMatching(/earlier payloads/) });
  });
});

describe("simulation: cross-arch differences with flaky tests and bad clusters", () => {
  // 300 tests, 20 payloads per arch, every payload on 3 clusters × 10 iterations per arch, cluster
  // weather as in the first-bad-payload simulation; both arches share every test's base rate.
  const draw = (random: () => number, planted: number, increase: number) => {
    const bases = Array.from({ length: 300 }, () => baseRate(random));
    const options = {
      random,
      tests: 300,
      payloads: 20,
      clustersPerPayload: 3,
      iterationsPerCluster: 10,
      bases,
    };
    const amd64 = simulatePayloadHistory(options);
    const arm64 = simulatePayloadHistory({ ...options, planted, plantedIncrease: increase, plantedAt: 19 });
    return crossArchDifferences({
      payload: amd64[19]!.payload,
      histories: [
        { arch: "amd64", history: amd64 },
        { arch: "arm64", history: arm64 },
      ],
    });
  };

  it("null: a false difference in at most q = 5% of payloads", () => {
    const random = seededRandom("cross-arch null");
    let falseDatasets = 0;
    for (let d = 0; d < 60; d++) if (draw(random, 0, 0).findings.length > 0) falseDatasets++;
    expect(falseDatasets / 60).toBeLessThanOrEqual(0.05);
  }, 120_000);

  it("an arm64-only regression of +50 points on 10 tests: most found, on arm64, few false", () => {
    const random = seededRandom("cross-arch planted");
    let found = 0;
    let falseFindings = 0;
    for (let d = 0; d < 15; d++) {
      for (const finding of draw(random, 10, 0.5).findings) {
        const planted = finding.arch === "arm64" && Number(finding.test.slice(testName(0).length - 1)) < 10;
        if (planted) found++;
        else falseFindings++;
      }
    }
    expect(found / 150).toBeGreaterThanOrEqual(0.5);
    expect(falseFindings / (found + falseFindings)).toBeLessThanOrEqual(0.05);
  }, 120_000);
});
