import { describe, expect, it } from "vitest";
import { findFirstBadPayload, scanFirstBadPayloads } from "../../src/analysis/first-bad-payload.ts";
import type { PayloadCounts } from "../../src/analysis/payload-counts.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulatePayloadHistory, testName } from "./payload-history-simulation.ts";

const TEST = "[sig-network] pods reach pods across nodes";

/** A history of one test: failed iterations of 30 per payload. */
function historyOf(failed: readonly number[], executions = 30): PayloadCounts[] {
  return failed.map((count, index) => ({
    release: `4.19.0-0.nightly-2026-11-${String(index + 1).padStart(2, "0")}-000000`,
    payload: `quay.io/ocp/release@sha256:${String(index).padStart(64, "0")}`,
    recordedAt: new Date(Date.UTC(2026, 10, index + 1)).toISOString(),
    runs: 1,
    tests: { [TEST]: { executions, failures: count, flakes: 0, clusters: 3 } },
  }));
}

describe("the first bad payload of a test", () => {
  it("is the payload from which the test's failure rate rose, with the counts before and after", () => {
    const failed = [0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 6, 8, 5, 7, 9, 6];
    const found = findFirstBadPayload({ history: historyOf(failed), test: TEST });
    expect(found).toMatchObject({
      test: TEST,
      index: 12,
      release: "4.19.0-0.nightly-2026-11-13-000000",
      payload: `quay.io/ocp/release@sha256:${"12".padStart(64, "0")}`,
      before: { executions: 12 * 30, failures: 3 },
      after: { executions: 6 * 30, failures: 41 },
      falseAlarmRate: 0.01,
    });
    expect(found!.pValue).toBeLessThanOrEqual(0.01);
  });

  it("is not a payload that had one bad cluster, nor a flaky test's ordinary spread", () => {
    // One payload failed half its iterations (a bad cluster), the newest or in the middle.
    const calm = [0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0];
    expect(findFirstBadPayload({ history: historyOf([...calm, 15]), test: TEST })).toBeUndefined();
    expect(
      findFirstBadPayload({ history: historyOf([...calm.slice(0, 9), 15, ...calm.slice(9)]), test: TEST }),
    ).toBeUndefined();
    // A test failing a quarter of its iterations, the counts spread as they are.
    const flaky = [9, 6, 8, 7, 10, 5, 7, 8, 6, 9, 7, 8, 12, 6, 7, 9, 8, 7];
    expect(findFirstBadPayload({ history: historyOf(flaky), test: TEST })).toBeUndefined();
    // Nothing to see in a test that never failed, or that is unknown.
    expect(findFirstBadPayload({ history: historyOf(calm.map(() => 0)), test: TEST })).toBeUndefined();
    expect(findFirstBadPayload({ history: historyOf(calm), test: "other" })).toBeUndefined();
  });

  it("needs two payloads after the change: with only the newest, a bad cluster and a regression look alike", () => {
    const calm = [0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0];
    expect(findFirstBadPayload({ history: historyOf([...calm, 12]), test: TEST })).toBeUndefined();
    expect(findFirstBadPayload({ history: historyOf([...calm, 12, 11]), test: TEST })).toMatchObject({
      index: 12,
    });
  });

  it("skips the payloads a test did not run on, and names the payload by its place in the whole history", () => {
    const history = historyOf([0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 9, 8, 7, 9]);
    delete history[5]!.tests[TEST];
    history[9]!.tests[TEST] = { executions: 0, failures: 0, flakes: 0 };
    expect(findFirstBadPayload({ history, test: TEST })).toMatchObject({
      index: 10,
      before: { executions: 8 * 30, failures: 1 },
      after: { executions: 4 * 30, failures: 33 },
    });
  });
});

describe("simulation: first bad payloads on histories with flaky tests and bad clusters", () => {
  // 300 tests × 30 payloads, each payload on 3 fresh clusters × 10 iterations; base failure rates
  // 50% at 0.2%, 25% at 2%, 15% at 8%, 10% at 25%; log-odds spread 0.8 between clusters; a quarter
  // of the clusters bad, multiplying the odds of half the tests by 6 (docs/analysis.md).
  const options = { tests: 300, payloads: 30, clustersPerPayload: 3, iterationsPerCluster: 10 };
  const isPlanted = (test: string) => Number(test.slice(testName(0).length - 1)) < 10;

  it("null histories: a false first bad payload in at most q = 5% of them", () => {
    const random = seededRandom("first-bad-payload null");
    let falseDatasets = 0;
    let familySize = 0;
    const datasets = 100;
    for (let d = 0; d < datasets; d++) {
      const scanned = scanFirstBadPayloads({ history: simulatePayloadHistory({ random, ...options }) });
      if (scanned.findings.length > 0) falseDatasets++;
      familySize += scanned.familySize;
    }
    // Every test of these histories is as it always was: any finding is false, and with no true
    // finding the false discovery rate is the share of datasets with any.
    expect(falseDatasets / datasets).toBeLessThanOrEqual(0.05);
    // The family is the tests that failed often enough to be flagged, not all 300.
    expect(familySize / datasets).toBeGreaterThan(50);
    expect(familySize / datasets).toBeLessThan(300);
  }, 120_000);

  it("one test at a time: a history with no change raises an alarm at most alpha = 1% of the time", () => {
    const random = seededRandom("first-bad-payload null per test");
    let alarms = 0;
    let judged = 0;
    for (let d = 0; d < 10; d++) {
      const history = simulatePayloadHistory({ random, ...options, tests: 200 });
      for (let t = 0; t < 200; t++) {
        judged++;
        if (findFirstBadPayload({ history, test: testName(t) })) alarms++;
      }
    }
    expect(alarms / judged).toBeLessThanOrEqual(0.01);
  }, 120_000);

  it("planted regressions (+20 points at a random payload): found, and at the right payload", () => {
    const random = seededRandom("first-bad-payload planted");
    let found = 0;
    let atTheRightPayload = 0;
    let falseFindings = 0;
    const datasets = 20;
    for (let d = 0; d < datasets; d++) {
      const plantedAt = 5 + Math.floor(random() * 20);
      const history = simulatePayloadHistory({
        random,
        ...options,
        planted: 10,
        plantedIncrease: 0.2,
        plantedAt,
      });
      for (const finding of scanFirstBadPayloads({ history }).findings) {
        if (!isPlanted(finding.test)) falseFindings++;
        else {
          found++;
          if (finding.index === plantedAt) atTheRightPayload++;
        }
      }
    }
    expect(found / (datasets * 10)).toBeGreaterThanOrEqual(0.8);
    expect(atTheRightPayload / found).toBeGreaterThanOrEqual(0.8);
    expect(falseFindings / (found + falseFindings)).toBeLessThanOrEqual(0.05);
  }, 120_000);
});
