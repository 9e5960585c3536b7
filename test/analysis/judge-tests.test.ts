import { describe, expect, it } from "vitest";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { createResultsAggregator } from "../../src/analysis/results-aggregator.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { armRecords, makeRecord } from "./make-records.ts";

function analyse(records: ResultRecord[], history?: Map<string, { runs: number; passes: number }>) {
  const aggregator = createResultsAggregator();
  for (const record of records) aggregator.add(record);
  return judgeTests({ run: aggregator.finish(), ...(history ? { history } : {}) });
}

function verdictOf(analysis: ReturnType<typeof analyse>, name: string) {
  const verdict = analysis.tests.find((test) => test.name === name);
  if (!verdict) throw new Error(`no verdict for ${name}`);
  return verdict;
}

describe("aggregation", () => {
  it("counts iterations, not attempts: a failure then a passing retry is one flake", () => {
    const analysis = analyse([
      ...armRecords({ name: "t", arm: "pr", runs: 10, failed: 2, flaked: 3 }),
      ...armRecords({ name: "t", arm: "baseline", runs: 10 }),
    ]);
    expect(verdictOf(analysis, "t").pr).toEqual({ runs: 10, passes: 5, failures: 2, flakes: 3, skips: 0 });
    expect(analysis.iterations).toEqual({ pr: 10, baseline: 10 });
  });

  it("drops a duplicate record instead of counting it twice", () => {
    const aggregator = createResultsAggregator();
    const record = makeRecord({ name: "t", result: "failed" });
    aggregator.add(record);
    aggregator.add(record);
    aggregator.add(makeRecord({ name: "t", result: "passed" })); // same iteration and attempt: a duplicate
    const run = aggregator.finish();
    expect(run.duplicates).toBe(2);
    expect(run.tests[0]!.pr).toMatchObject({ runs: 1, failures: 1, passes: 0 });
  });

  it("counts skipped-only iterations as skips, not runs", () => {
    const analysis = analyse([
      makeRecord({ name: "s", result: "skipped", iteration: 0 }),
      makeRecord({ name: "s", result: "skipped", iteration: 1 }),
      makeRecord({ name: "s", result: "passed", iteration: 2 }),
    ]);
    expect(verdictOf(analysis, "s").pr).toMatchObject({ runs: 1, skips: 2 });
  });
});

describe("verdicts", () => {
  const clean = (name: string, runs = 10) => [
    ...armRecords({ name, arm: "pr", runs }),
    ...armRecords({ name, arm: "baseline", runs }),
  ];

  it("flags a test that fails far more often in the PR, and fails the run when it is blocking", () => {
    const analysis = analyse([
      ...armRecords({ name: "regressed", arm: "pr", runs: 10, failed: 6, flaked: 1 }),
      ...armRecords({ name: "regressed", arm: "baseline", runs: 10 }),
      ...clean("fine"),
    ]);
    const verdict = verdictOf(analysis, "regressed");
    expect(verdict.class).toBe("regression");
    expect(verdict.pValue).toBeLessThan(0.01);
    expect(verdict.qValue).toBeLessThanOrEqual(0.05);
    expect(verdict.minDetectableFailureRate).toBeNull();
    expect(analysis.conclusion).toBe("failure");
    expect(verdictOf(analysis, "fine").class).toBe("stable");
  });

  it.each([
    {
      why: "an informing test never fails the run, even when it regressed",
      pr: { failed: 8 },
      baseline: {},
      lifecycle: "informing",
      runs: 10,
      expected: "regression",
      conclusion: "success",
    },
    {
      why: "fewer than 3 PR failures are held back however small the p-value (guard)",
      pr: { failed: 2 },
      baseline: {},
      lifecycle: "blocking",
      runs: 40,
      expected: "new-flake",
      conclusion: "neutral",
    },
    {
      why: "failing every run in both arms is a consistent failure, not a regression",
      pr: { failed: 10 },
      baseline: { failed: 10 },
      lifecycle: "blocking",
      runs: 10,
      expected: "consistent-failure",
      conclusion: "success",
    },
  ] as const)("$why", ({ pr, baseline, lifecycle, runs, expected, conclusion }) => {
    const analysis = analyse([
      ...armRecords({ name: "t", arm: "pr", runs, lifecycle, ...pr }),
      ...armRecords({ name: "t", arm: "baseline", runs, lifecycle, ...baseline }),
    ]);
    expect(verdictOf(analysis, "t").class).toBe(expected);
    expect(analysis.conclusion).toBe(conclusion);
  });

  it("calls a test failing in both arms alike a known flake with the rate it could have detected", () => {
    const analysis = analyse([
      ...armRecords({ name: "flaky", arm: "pr", runs: 20, flaked: 4 }),
      ...armRecords({ name: "flaky", arm: "baseline", runs: 20, flaked: 5 }),
    ]);
    const verdict = verdictOf(analysis, "flaky");
    expect(verdict.class).toBe("known-flake");
    expect(verdict.minDetectableFailureRate).toBeGreaterThan(0.25);
    expect(verdict.minDetectableFailureRate).toBeLessThan(1);
    expect(analysis.conclusion).toBe("success");
  });

  it("says fixed only when the PR fails significantly less", () => {
    const analysis = analyse([
      ...armRecords({ name: "fixed", arm: "pr", runs: 10 }),
      ...armRecords({ name: "fixed", arm: "baseline", runs: 10, failed: 7 }),
      ...armRecords({ name: "lucky", arm: "pr", runs: 10 }),
      ...armRecords({ name: "lucky", arm: "baseline", runs: 10, failed: 1 }),
    ]);
    expect(verdictOf(analysis, "fixed").class).toBe("fixed");
    expect(verdictOf(analysis, "lucky").class).toBe("known-flake");
  });

  it("never calls a test with few runs passed: it is inconclusive, and a failure among them makes the run neutral", () => {
    const analysis = analyse([
      ...armRecords({ name: "short", arm: "pr", runs: 4, failed: 1 }),
      ...armRecords({ name: "short", arm: "baseline", runs: 4 }),
      ...armRecords({ name: "short-clean", arm: "pr", runs: 4 }),
      ...armRecords({ name: "short-clean", arm: "baseline", runs: 4 }),
    ]);
    expect(verdictOf(analysis, "short").class).toBe("inconclusive");
    expect(verdictOf(analysis, "short-clean").class).toBe("inconclusive");
    expect(analysis.conclusion).toBe("neutral");
  });

  it("reports tests in one arm only as new or removed, and fails the run on a failing new blocking test", () => {
    const analysis = analyse([
      ...armRecords({ name: "new", arm: "pr", runs: 10, failed: 1 }),
      ...armRecords({ name: "gone", arm: "baseline", runs: 10 }),
      ...clean("kept"),
    ]);
    expect(verdictOf(analysis, "new").class).toBe("new-test");
    expect(verdictOf(analysis, "gone").class).toBe("removed");
    expect(analysis.conclusion).toBe("failure");
    expect(analysis.conclusionReason).toMatch(/new blocking/);
  });

  it("makes the run neutral, not failed, when a new blocking test only flaked", () => {
    const analysis = analyse([
      ...armRecords({ name: "new", arm: "pr", runs: 10, flaked: 1 }),
      ...clean("kept"),
    ]);
    expect(verdictOf(analysis, "new").class).toBe("new-test");
    expect(analysis.conclusion).toBe("neutral");
  });

  it("is neutral, not successful, when the PR arm produced nothing", () => {
    const analysis = analyse([]);
    expect(analysis.conclusion).toBe("neutral");
    expect(analysis.tests).toEqual([]);
  });

  it("leaves tests that cannot reach significance out of the BH family", () => {
    const analysis = analyse([
      ...armRecords({ name: "regressed", arm: "pr", runs: 10, failed: 6 }),
      ...armRecords({ name: "regressed", arm: "baseline", runs: 10 }),
      ...Array.from({ length: 50 }, (_, index) => clean(`clean-${index}`)).flat(),
    ]);
    expect(analysis.familySize).toBe(1);
    expect(verdictOf(analysis, "clean-0").qValue).toBeNull();
    expect(verdictOf(analysis, "regressed").qValue).toBe(verdictOf(analysis, "regressed").pValue);
  });
});

describe("history baseline", () => {
  it("applies the aggregator rule with its pity factor: two failures against a perfect history are tolerated", () => {
    const history = new Map([
      ["two", { runs: 300, passes: 300 }],
      ["four", { runs: 300, passes: 300 }],
    ]);
    const analysis = analyse(
      [
        ...armRecords({ name: "two", arm: "pr", runs: 10, failed: 2 }),
        ...armRecords({ name: "four", arm: "pr", runs: 10, failed: 4 }),
      ],
      history,
    );
    expect(analysis.baselineKind).toBe("history");
    expect(verdictOf(analysis, "two").historyRule).toMatchObject({ verdict: "pass", required: 8 });
    expect(verdictOf(analysis, "four").historyRule).toMatchObject({ verdict: "fail" });
    expect(verdictOf(analysis, "four").class).toBe("regression");
    expect(verdictOf(analysis, "two").class).not.toBe("regression");
  });

  it("with a baseline arm and a history, flags only what both the arm comparison and the history rule flag", () => {
    const records = [
      ...armRecords({ name: "worse", arm: "pr", runs: 10, failed: 6 }),
      ...armRecords({ name: "worse", arm: "baseline", runs: 10 }),
    ];
    const historyOf = (passes: number) => new Map([["worse", { runs: 300, passes }]]);
    const lenient = analyse(records, historyOf(120)); // history passes 40%: 4 of 10 passes are enough
    expect(lenient.baselineKind).toBe("arm+history");
    expect(lenient.tests[0]!.historyRule).toMatchObject({ verdict: "pass" });
    expect(lenient.tests[0]!.class).not.toBe("regression");
    expect(analyse(records, historyOf(300)).tests[0]!.class).toBe("regression");
  });

  it("does not judge fewer than six attempts against history", () => {
    const analysis = analyse(
      armRecords({ name: "few", arm: "pr", runs: 5, failed: 5 }),
      new Map([["few", { runs: 300, passes: 300 }]]),
    );
    expect(verdictOf(analysis, "few").historyRule?.verdict).toBe("too-few-attempts");
    expect(verdictOf(analysis, "few").class).toBe("inconclusive");
  });
});
