import { describe, expect, it } from "vitest";
import { compareDisruption } from "../../src/analysis/disruption-compare.ts";
import { withDisruption } from "../../src/analysis/disruption-conclusion.ts";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { createResultsAggregator } from "../../src/analysis/results-aggregator.ts";
import type { Disruption } from "@netstress/core/model/disruption-schema.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { makeRecord } from "./make-records.ts";

const DISRUPTIVE = "[sig-network][Disruptive][Serial] node agent restart should keep paths reachable";

const entry = (path: string, connection: "new" | "reused", disruptedSeconds: number): Disruption => ({
  path,
  connection,
  observedSeconds: 60,
  disruptedSeconds,
  budgetSeconds: 3,
  intervals:
    disruptedSeconds > 0
      ? [{ from: "2025-01-01T00:00:10Z", to: "2025-01-01T00:00:12Z", reason: "connect timeout" }]
      : [],
});

/** One record per iteration of `arm`, `seconds(iteration)` on pod-to-pod-cross-node/new, none elsewhere. */
function armRecords({
  arm,
  iterations,
  seconds,
  clusters = 0,
  lifecycle = "blocking",
}: {
  arm: "pr" | "baseline";
  iterations: number;
  seconds: (iteration: number) => number;
  clusters?: number;
  lifecycle?: "blocking" | "informing";
}): ResultRecord[] {
  return Array.from({ length: iterations }, (_, iteration) =>
    makeRecord({
      name: DISRUPTIVE,
      arm,
      iteration,
      lifecycle,
      component: "netstress",
      ...(clusters > 0 ? { cluster: `${arm}-${iteration % clusters}` } : {}),
      disruption: [
        entry("pod-to-pod-cross-node", "new", seconds(iteration)),
        entry("pod-to-service", "new", 0),
      ],
    }),
  );
}

function analyze(records: readonly ResultRecord[]) {
  const aggregator = createResultsAggregator();
  for (const record of records) aggregator.add(record);
  const run = aggregator.finish();
  const judged = judgeTests({ run });
  const disruption = compareDisruption({
    run,
    unit: judged.rule,
    onePerArm: judged.clusters?.onePerArm ?? false,
  });
  return withDisruption({ analysis: judged, disruption });
}

const row = (analysis: ReturnType<typeof analyze>, path = "pod-to-pod-cross-node") =>
  analysis.disruption!.rows.find((r) => r.path === path && r.connection === "new")!;

// Realistic baseline: mostly nothing, now and then a spike.
const baselineSeconds = (i: number) => (i % 7 === 3 ? 4 : i % 11 === 5 ? 1 : 0);

describe("compareDisruption", () => {
  it("calls +2 s on every PR iteration a regression and fails the run", () => {
    const analysis = analyze([
      ...armRecords({ arm: "pr", iterations: 12, seconds: (i) => 2 + baselineSeconds(i + 1), clusters: 4 }),
      ...armRecords({ arm: "baseline", iterations: 12, seconds: baselineSeconds, clusters: 4 }),
    ]);
    const cross = row(analysis);
    expect(cross.verdict).toBe("regression");
    expect(cross.reason).toMatch(
      /^PR P50 2 s, P99 6 s \(max of 12\), baseline P50 0 s, P99 4 s \(max of 12\)/,
    );
    expect(cross.qValue).toBeLessThanOrEqual(0.05);
    expect(analysis.conclusion).toBe("failure");
    expect(analysis.conclusionReason).toBe(
      "1 path(s) of 1 blocking test(s) disrupted significantly longer than the baseline",
    );
    // The quiet path stays out of the family and says what it would have caught.
    const service = row(analysis, "pod-to-service");
    expect(service.verdict).toBe("stable");
    expect(service.qValue).toBeNull();
    expect(service.reason).toMatch(
      /no disruption in either arm \(12 and 12 samples\); would have flagged \+\d/,
    );
    expect(analysis.disruption!.familySize).toBe(1);
  });

  it("does not take one stormy PR cluster for a regression", () => {
    // PR cluster 0 disrupts every time (weather); the other PR clusters look like the baseline.
    const analysis = analyze([
      ...armRecords({
        arm: "pr",
        iterations: 12,
        seconds: (i) => (i % 4 === 0 ? 6 : baselineSeconds(i)),
        clusters: 4,
      }),
      ...armRecords({ arm: "baseline", iterations: 12, seconds: baselineSeconds, clusters: 4 }),
    ]);
    expect(row(analysis).verdict).not.toBe("regression");
    expect(analysis.conclusion).toBe("success");
  });

  it("would call that same data a regression if the iterations were independent draws", () => {
    const analysis = analyze([
      ...armRecords({ arm: "pr", iterations: 24, seconds: (i) => (i % 4 === 0 ? 6 : baselineSeconds(i)) }),
      ...armRecords({ arm: "baseline", iterations: 24, seconds: baselineSeconds }),
    ]);
    expect(analysis.disruption!.unit).toBe("iteration");
    expect(row(analysis).pValue).toBeLessThan(0.05);
  });

  it("states no difference with one cluster per arm", () => {
    const analysis = analyze([
      ...armRecords({ arm: "pr", iterations: 10, seconds: () => 2, clusters: 1 }),
      ...armRecords({ arm: "baseline", iterations: 10, seconds: () => 0, clusters: 1 }),
    ]);
    expect(row(analysis).verdict).toBe("inconclusive");
    expect(row(analysis).reason).toMatch(/1 cluster per arm/);
    expect(row(analysis, "pod-to-service").verdict).toBe("stable");
    expect(analysis.conclusion).toBe("success");
  });

  it("needs enough samples, and a shift worth a probe interval", () => {
    const few = analyze([
      ...armRecords({ arm: "pr", iterations: 4, seconds: () => 5 }),
      ...armRecords({ arm: "baseline", iterations: 4, seconds: () => 0 }),
    ]);
    expect(row(few).verdict).toBe("inconclusive");
    expect(row(few).reason).toMatch(/too few samples to judge \(need 6 in each arm\)/);
    const small = analyze([
      ...armRecords({ arm: "pr", iterations: 20, seconds: () => 0.4 }),
      ...armRecords({ arm: "baseline", iterations: 20, seconds: () => 0 }),
    ]);
    expect(row(small).qValue).toBeLessThan(0.05);
    expect(row(small).verdict).toBe("stable");
    expect(row(small).reason).toMatch(/by 0\.4 s on average, under the 1 s that counts/);
  });

  it("never fails the run for an informing test", () => {
    const analysis = analyze([
      ...armRecords({ arm: "pr", iterations: 12, seconds: () => 3, lifecycle: "informing" }),
      ...armRecords({ arm: "baseline", iterations: 12, seconds: baselineSeconds, lifecycle: "informing" }),
    ]);
    expect(row(analysis).verdict).toBe("regression");
    expect(analysis.conclusion).toBe("success");
  });

  it("keeps an iteration's first attempt and says P99 of 200 samples is not the max", () => {
    const records = [
      ...armRecords({ arm: "pr", iterations: 200, seconds: (i) => (i < 3 ? 50 : i % 10) }),
      ...armRecords({ arm: "baseline", iterations: 200, seconds: (i) => i % 10 }),
      makeRecord({
        name: DISRUPTIVE,
        arm: "pr",
        iteration: 5,
        attempt: 1,
        component: "netstress",
        disruption: [entry("pod-to-pod-cross-node", "new", 99)],
      }),
    ];
    const cross = row(analyze(records));
    expect(cross.pr.samples).toBe(200);
    expect(cross.pr.max).toBe(50);
    expect(cross.pr.p50).toBe(5);
    expect(cross.pr.p99).toBe(50);
    expect(cross.pr.p99IsMax).toBe(false);
    expect(cross.reason).toMatch(/PR P50 5 s, P99 50 s of 200/);
  });

  it("is absent when no test reported disruption, and says which arm lacks a path", () => {
    const aggregator = createResultsAggregator();
    aggregator.add(makeRecord({ name: "plain" }));
    expect(compareDisruption({ run: aggregator.finish(), unit: "iteration" })).toBeUndefined();
    const analysis = analyze(armRecords({ arm: "pr", iterations: 8, seconds: () => 1 }));
    expect(row(analysis).verdict).toBe("inconclusive");
    expect(row(analysis).reason).toMatch(/only the PR reported it .*nothing to compare with/);
  });
});
