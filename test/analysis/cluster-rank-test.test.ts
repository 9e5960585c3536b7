import { describe, expect, it } from "vitest";
import { clusterRankTest } from "../../src/analysis/cluster-rank-test.ts";
import { studentTUpperTail } from "../../src/analysis/student-t-upper-tail.ts";

describe("studentTUpperTail", () => {
  it("matches scipy.stats.t.sf", () => {
    // python3 -c "from scipy.stats import t; print(t.sf(T, DF))"
    const cases: [number, number, number][] = [
      [0, 1, 0.5],
      [1, 1, 0.25],
      [2.5, 2, 0.06480586011075541],
      [3.1, 4, 0.018110555518719575],
      [12, 1, 0.026464676059589878],
      [-1.3, 7, 0.8826160823038114],
      [5, 30, 1.16483427335039e-5],
      [0.4, 100, 0.34500483720394526],
      [40, 3, 1.7190340394579253e-5],
      [2.0, 0.5, 0.22275744509156564],
    ];
    for (const [t, df, expected] of cases) {
      expect(studentTUpperTail({ t, df })).toBeCloseTo(expected, 12);
    }
    expect(studentTUpperTail({ t: Infinity, df: 3 })).toBe(0);
    expect(() => studentTUpperTail({ t: 1, df: 0 })).toThrow(RangeError);
  });
});

describe("clusterRankTest", () => {
  it("is the rank-transform t-test with one value per unit", () => {
    // Ranks 1..6 of 6 values, normalized (r − ½)/6; PR holds ranks 4, 5, 6.
    const result = clusterRankTest({ pr: [[4], [5], [6]], baseline: [[1], [2], [3]] })!;
    // Scores: PR mean (3.5+4.5+5.5)/18 = 0.75, baseline 0.25; pooled variance of each arm 1/36.
    expect(result.prScore).toBeCloseTo(0.75, 12);
    expect(result.baselineScore).toBeCloseTo(0.25, 12);
    expect(result.df).toBe(4);
    expect(result.t).toBeCloseTo(0.5 / Math.sqrt((1 / 36) * (2 / 3)), 10);
    expect(result.pValue).toBeCloseTo(studentTUpperTail({ t: result.t, df: 4 }), 12);
  });

  it("is one-sided: a PR that disrupts less is no evidence", () => {
    const worse = clusterRankTest({
      pr: [
        [3, 4],
        [5, 3],
      ],
      baseline: [
        [0, 0],
        [1, 0],
      ],
    })!;
    const better = clusterRankTest({
      pr: [
        [0, 0],
        [1, 0],
      ],
      baseline: [
        [3, 4],
        [5, 3],
      ],
    })!;
    expect(worse.pValue).toBeLessThan(0.05);
    expect(better.pValue).toBeGreaterThan(0.95);
  });

  it("charges the PR for its clusters: the same values mean less when one cluster carries them", () => {
    const spread = clusterRankTest({
      pr: [
        [2, 0, 2],
        [0, 2, 0],
        [2, 0, 2],
      ],
      baseline: [
        [0, 0, 0],
        [0, 2, 0],
        [0, 0, 0],
      ],
    })!;
    // One PR cluster with all the disruption, and one quiet baseline cluster less: more like weather.
    const oneCluster = clusterRankTest({
      pr: [
        [2, 2, 2],
        [2, 2, 0],
        [0, 0, 0],
      ],
      baseline: [
        [0, 0, 0],
        [0, 2, 0],
        [0, 0, 0],
      ],
    })!;
    expect(oneCluster.prScore).toBeCloseTo(spread.prScore, 12);
    expect(oneCluster.pValue).toBeGreaterThan(spread.pValue);
  });

  it("weighs a 60 s outage no more than any value above the rest", () => {
    const modest = clusterRankTest({ pr: [[3], [0], [0], [0]], baseline: [[0], [0], [1], [0]] })!;
    const huge = clusterRankTest({ pr: [[60], [0], [0], [0]], baseline: [[0], [0], [1], [0]] })!;
    expect(huge.pValue).toBe(modest.pValue);
  });

  it("cannot compare all-tied values, an empty arm, or fewer than three units", () => {
    expect(clusterRankTest({ pr: [[0, 0], [0]], baseline: [[0], [0, 0]] })).toBeNull();
    expect(clusterRankTest({ pr: [[1, 2]], baseline: [[], []] })).toBeNull();
    expect(clusterRankTest({ pr: [[5, 5, 5]], baseline: [[0, 0, 0]] })).toBeNull();
  });

  it("never reads arms that differ only by constant values within each as certainty with few units", () => {
    const result = clusterRankTest({
      pr: [[2, 2, 2]],
      baseline: [
        [0, 0, 0],
        [0, 0, 0],
      ],
    })!;
    expect(result.df).toBe(1);
    expect(result.pValue).toBeGreaterThan(0.005);
  });
});
