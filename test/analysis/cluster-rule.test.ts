import { describe, expect, it } from "vitest";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { createResultsAggregator } from "../../src/analysis/results-aggregator.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { clusteredRecords, makeRecord } from "./make-records.ts";

function analyse(records: ResultRecord[]) {
  const aggregator = createResultsAggregator();
  for (const record of records) aggregator.add(record);
  return judgeTests({ run: aggregator.finish() });
}

const verdict = (analysis: ReturnType<typeof analyse>, name: string) =>
  analysis.tests.find((test) => test.name === name)!;

const clean = [0, 0, 0, 0, 0, 0];
const twoArms = (name: string, pr: number[], baseline: number[], label = true) => [
  ...clusteredRecords({ name, arm: "pr", failedPerCluster: pr, label }),
  ...clusteredRecords({ name, arm: "baseline", failedPerCluster: baseline, label }),
];

describe("the cluster rule", () => {
  const records = [
    ...twoArms("spread over every PR cluster", [2, 2, 2, 2, 2, 2], clean),
    ...twoArms("carried by one PR cluster", [4, 1, 0, 0, 0, 0], clean),
    ...twoArms("never fails", clean, clean),
  ];

  it("runs when every record names its cluster, counting failed iterations cluster by cluster", () => {
    const analysis = analyse(records);
    expect(analysis.rule).toBe("cluster");
    expect(analysis.ruleNote).toContain("PR 6 cluster(s), baseline 6");
    expect(analysis.clusters?.counts).toEqual({ pr: 6, baseline: 6 });
    const test = verdict(analysis, "carried by one PR cluster");
    expect(test.clusters?.pr.map((count) => [count.cluster, count.runs, count.failed])).toEqual([
      ["pr-cluster-0", 4, 4],
      ["pr-cluster-1", 4, 1],
      ["pr-cluster-2", 4, 0],
      ["pr-cluster-3", 4, 0],
      ["pr-cluster-4", 4, 0],
      ["pr-cluster-5", 4, 0],
    ]);
    expect(test.clusters?.dominant).toEqual({ arm: "pr", cluster: "pr-cluster-0", failed: 4, of: 5 });
  });

  it("blames the PR for failures on every PR cluster, not for failures one cluster carried", () => {
    const cluster = analyse(records);
    expect(verdict(cluster, "spread over every PR cluster").class).toBe("regression");
    expect(verdict(cluster, "carried by one PR cluster").class).not.toBe("regression");
    expect(verdict(cluster, "carried by one PR cluster").clusters!.dispersion).toBeGreaterThan(2);
    // Counted as independent iterations, the one bad cluster looks like a regression.
    const iteration = analyse(records.map(({ cluster: _cluster, ...record }) => record));
    expect(iteration.rule).toBe("iteration");
    expect(verdict(iteration, "carried by one PR cluster").class).toBe("regression");
  });

  it("falls back to the iteration rule, saying so, when some records name no cluster", () => {
    const analysis = analyse([...records, ...twoArms("unlabelled", clean, clean, false)]);
    expect(analysis.rule).toBe("iteration");
    expect(analysis.ruleNote).toBe(
      "iteration rule: every iteration counted as an independent draw (48 record(s) name no cluster; the cluster rule needs every one to)",
    );
    expect(analysis.clusters).toBeUndefined();
  });

  it("keeps the iteration rule against a pooled history, which has no clusters", () => {
    const aggregator = createResultsAggregator();
    for (const record of clusteredRecords({ name: "t", arm: "pr", failedPerCluster: [2, 2, 2, 2, 2, 2] }))
      aggregator.add(record);
    const analysis = judgeTests({
      run: aggregator.finish(),
      history: new Map([["t", { runs: 500, passes: 495 }]]),
    });
    expect(analysis.baselineKind).toBe("history");
    expect(analysis.rule).toBe("iteration");
    expect(analysis.ruleNote).toContain("a pooled history baseline has no clusters");
  });

  it("calls a test fixed only when its baseline failures were spread beyond what cluster weather explains", () => {
    const analysis = analyse([
      ...twoArms("fixed everywhere", clean, [2, 2, 2, 2, 2, 2]),
      ...twoArms("one bad baseline cluster", clean, [4, 1, 0, 0, 0, 0]),
    ]);
    expect(verdict(analysis, "fixed everywhere").class).toBe("fixed");
    expect(verdict(analysis, "one bad baseline cluster").class).toBe("known-flake");
  });

  it("falls back when one iteration names two clusters", () => {
    const conflicting = makeRecord({
      name: "never fails",
      arm: "pr",
      iteration: 0,
      attempt: 1,
      cluster: "elsewhere",
    });
    const analysis = analyse([...records, conflicting]);
    expect(analysis.rule).toBe("iteration");
    expect(analysis.ruleNote).toContain("1 record(s) name another cluster than the rest of their iteration");
  });

  it("states a detectable rate that grows as the clusters differ more and shrinks with more clusters", () => {
    const background = (pr: number[], baseline: number[], count: number) =>
      Array.from({ length: count }, (_, index) => twoArms(`flaky ${index}`, pr, baseline)).flat();
    const alike = analyse([
      ...twoArms("clean", clean, clean),
      ...background([1, 1, 1, 0, 1, 1], [1, 0, 1, 1, 1, 1], 50),
    ]);
    const weather = analyse([
      ...twoArms("clean", clean, clean),
      ...background([4, 1, 0, 0, 0, 0], [0, 0, 4, 1, 0, 0], 50),
    ]);
    const alikeRate = verdict(alike, "clean").minDetectableFailureRate!;
    const weatherRate = verdict(weather, "clean").minDetectableFailureRate!;
    expect(weather.clusters!.typicalDispersion).toBeGreaterThan(alike.clusters!.typicalDispersion);
    expect(weatherRate).toBeGreaterThan(alikeRate + 0.05);

    const twelve = new Array<number>(12).fill(0);
    const more = analyse([
      ...twoArms("clean", twelve, twelve),
      ...background([4, 1, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0], [0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 4, 1], 50),
    ]);
    expect(verdict(more, "clean").minDetectableFailureRate!).toBeLessThan(weatherRate);
  });

  it("marks a cluster that fails many tests at once as bad", () => {
    const tests = Array.from({ length: 40 }, (_, index) =>
      twoArms(
        `t${index}`,
        [index % 2 === 0 ? 3 : 2, 0, index % 5 === 0 ? 1 : 0, 0, 0, 0],
        [0, index % 7 === 0 ? 1 : 0, 0, 0, 0, 0],
      ),
    ).flat();
    const weather = analyse(tests).clusters!.weather;
    expect(weather.filter((cluster) => cluster.bad).map((cluster) => cluster.cluster)).toEqual([
      "pr-cluster-0",
    ]);
    expect(weather.find((cluster) => cluster.cluster === "pr-cluster-0")!.ratio).toBeGreaterThan(4);
  });
});
