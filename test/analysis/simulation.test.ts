import { describe, expect, it } from "vitest";
import { fisherExactGreater } from "../../src/analysis/fisher-exact.ts";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { createResultsAggregator } from "../../src/analysis/results-aggregator.ts";
import {
  DEFAULT_ANALYSIS_SETTINGS,
  type AggregatedRun,
  type ArmAggregate,
} from "../../src/analysis/types.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { armRecords } from "./make-records.ts";

const random = seededRandom("simulation-test");

function binomialDraw(n: number, p: number): number {
  let failures = 0;
  for (let i = 0; i < n; i++) if (random() < p) failures++;
  return failures;
}

/** An arm's counts with `failed` failed iterations out of `runs` (verdicts need no per-iteration outcomes). */
function arm(runs: number, failed: number): ArmAggregate {
  return {
    runs,
    passes: runs - failed,
    failures: failed,
    flakes: 0,
    skips: 0,
    outcomes: [],
    executions: runs,
    totalDurationMs: 0,
  };
}

function countsRun(tests: { pr: [number, number]; baseline: [number, number] }[]): AggregatedRun {
  return {
    arches: ["amd64"],
    iterations: { pr: 10, baseline: 10 },
    records: 0,
    duplicates: 0,
    tests: tests.map((test, index) => ({
      name: `t${index}`,
      component: "c",
      lifecycle: "blocking",
      pr: arm(...test.pr),
      baseline: arm(...test.baseline),
    })),
  };
}

/** Flake rates as a real suite has them: mostly solid, some flaky, a few very flaky. */
function flakeRate(): number {
  const draw = random();
  return draw < 0.6 ? 0 : draw < 0.8 ? 0.02 : draw < 0.9 ? 0.1 : 0.3;
}

const sigma = (p: number, n: number) => Math.sqrt((p * (1 - p)) / n);

describe("simulated null data: both arms from the same flake rates", () => {
  it("flags no more than the nominal FDR of 2,000 tests × 10 runs, read from records", () => {
    const aggregator = createResultsAggregator();
    for (let index = 0; index < 2000; index++) {
      const rate = flakeRate();
      for (const side of ["pr", "baseline"] as const) {
        const name = `[sig-network] null ${index}`;
        for (const record of armRecords({ name, arm: side, runs: 10, failed: binomialDraw(10, rate) }))
          aggregator.add(record);
      }
    }
    const analysis = judgeTests({ run: aggregator.finish() });
    expect(analysis.tests).toHaveLength(2000);
    expect(analysis.counts.regression / 2000).toBeLessThanOrEqual(DEFAULT_ANALYSIS_SETTINGS.q);
  });

  it("keeps the chance of any false discovery (the FDR under the global null) within q over 100 repetitions", () => {
    const repetitions = 100;
    let withFalseDiscovery = 0;
    let flagged = 0;
    for (let repetition = 0; repetition < repetitions; repetition++) {
      const tests = Array.from({ length: 2000 }, () => {
        const rate = flakeRate();
        return {
          pr: [10, binomialDraw(10, rate)] as [number, number],
          baseline: [10, binomialDraw(10, rate)] as [number, number],
        };
      });
      const regressions = judgeTests({ run: countsRun(tests) }).counts.regression;
      flagged += regressions;
      if (regressions > 0) withFalseDiscovery++;
    }
    const q = DEFAULT_ANALYSIS_SETTINGS.q;
    expect(withFalseDiscovery / repetitions).toBeLessThanOrEqual(q + 3 * sigma(q, repetitions));
    expect(flagged / (repetitions * 2000)).toBeLessThan(q);
  });
});

/** Exact power of the single-test decision (q = α for a family of one): sum over both arms' binomials. */
function theoreticalPower({ n, p0, p1 }: { n: number; p0: number; p1: number }): number {
  const pmf = (k: number, p: number) => {
    let c = 1;
    for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
    return c * p ** k * (1 - p) ** (n - k);
  };
  const { q, minimumPrFailures, minimumPassRateDrop } = DEFAULT_ANALYSIS_SETTINGS;
  let power = 0;
  for (let c = 0; c <= n; c++) {
    for (let a = minimumPrFailures; a <= n; a++) {
      const drop = (n - c) / n - (n - a) / n;
      if (drop > minimumPassRateDrop && fisherExactGreater({ a, b: n - a, c, d: n - c }) <= q)
        power += pmf(c, p0) * pmf(a, p1);
    }
  }
  return power;
}

describe("simulated regressions", () => {
  it.each([
    { n: 10, p0: 0, p1: 0.5 },
    { n: 10, p0: 0.05, p1: 0.6 },
    { n: 20, p0: 0.02, p1: 0.3 },
    { n: 20, p0: 0.1, p1: 0.5 },
  ])("are found as often as theory says (n=$n, baseline $p0, PR $p1)", ({ n, p0, p1 }) => {
    const trials = 1500;
    let found = 0;
    for (let trial = 0; trial < trials; trial++) {
      const run = countsRun([{ pr: [n, binomialDraw(n, p1)], baseline: [n, binomialDraw(n, p0)] }]);
      if (judgeTests({ run }).tests[0]!.class === "regression") found++;
    }
    const theory = theoreticalPower({ n, p0, p1 });
    expect(Math.abs(found / trials - theory)).toBeLessThan(4 * sigma(theory, trials) + 1e-9);
  });

  it("finds a regression at the stated minimum detectable failure rate 80% of the time", () => {
    const n = 20;
    const clean = judgeTests({ run: countsRun([{ pr: [n, 0], baseline: [n, 1] }]) }).tests[0]!;
    const rate = clean.minDetectableFailureRate!;
    expect(rate).toBeGreaterThan(0.1);
    expect(rate).toBeLessThan(0.6);
    const trials = 2000;
    let found = 0;
    for (let trial = 0; trial < trials; trial++) {
      const run = countsRun([{ pr: [n, binomialDraw(n, rate)], baseline: [n, 1] }]);
      if (judgeTests({ run }).tests[0]!.class === "regression") found++;
    }
    expect(Math.abs(found / trials - 0.8)).toBeLessThan(4 * sigma(0.8, trials));
  });
});
