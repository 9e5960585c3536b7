import { describe, expect, it } from "vitest";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { createResultsAggregator } from "../../src/analysis/results-aggregator.ts";
import { armHistory } from "../../src/history/arm-history.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { armRecords } from "./make-records.ts";

const OLD = "[sig-network] pods reach a service";
const NEW = "[sig-network][Feature:Services] pods reach a service over its ClusterIP";

function analyse(records: ResultRecord[], history?: Map<string, { runs: number; passes: number }>) {
  const aggregator = createResultsAggregator();
  for (const record of records) aggregator.add(record);
  return judgeTests({ run: aggregator.finish(), ...(history ? { history } : {}) });
}

/** The PR's records of the renamed spec: its new name, its first name as originalName. */
const renamed = (runs: number, failed: number) =>
  armRecords({ name: NEW, arm: "pr", runs, failed }).map((r) => ({ ...r, originalName: OLD }));

describe("a test the PR renamed (spec originalName)", () => {
  it("is compared with its old name in the baseline arm, not judged a new test beside a removed one", () => {
    const analysis = analyse([...renamed(20, 12), ...armRecords({ name: OLD, arm: "baseline", runs: 20 })]);
    expect(analysis.tests.map((t) => [t.name, t.class])).toEqual([[NEW, "regression"]]);
    expect(analysis.tests[0]).toMatchObject({
      baselineName: OLD,
      pr: { runs: 20, failures: 12 },
      baseline: { runs: 20, failures: 0 },
    });
    // Each arm feeds the history pool under the name its payload knows the test by.
    expect(armHistory(analysis, "baseline").map((t) => t.name)).toEqual([OLD]);
    expect(armHistory(analysis, "pr").map((t) => t.name)).toEqual([NEW]);
  });

  it("joins through the baseline's own originalName when the test was renamed before", () => {
    const FIRST = "[sig-network] services work";
    const analysis = analyse([
      ...armRecords({ name: NEW, arm: "pr", runs: 10 }).map((r) => ({ ...r, originalName: FIRST })),
      ...armRecords({ name: OLD, arm: "baseline", runs: 10 }).map((r) => ({ ...r, originalName: FIRST })),
    ]);
    expect(analysis.tests.map((t) => [t.name, t.class, t.baselineName])).toEqual([[NEW, "stable", OLD]]);
  });

  it("keeps the pooled history the released payload recorded under the old name", () => {
    const history = new Map([[OLD, { runs: 400, passes: 400 }]]);
    const analysis = analyse(renamed(20, 12), history);
    expect(analysis.tests.map((t) => [t.name, t.class])).toEqual([[NEW, "regression"]]);
  });
});
