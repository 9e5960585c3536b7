import type { Analysis } from "../analysis/types.ts";
import type { HistoryTestCounts } from "./history-store.ts";

/**
 * What an arm of an analyzed run adds to the history pool: per test, iterations run, passed
 * cleanly and flaked (a flaked iteration is not a pass, as everywhere in the analysis). Taken from the arm's own
 * aggregate, never from the baseline counts a history comparison filled in, so the pool never feeds
 * on itself.
 */
export function armHistory(analysis: Analysis, arm: "pr" | "baseline"): HistoryTestCounts[] {
  const counts: HistoryTestCounts[] = [];
  for (const test of analysis.tests) {
    const aggregate = arm === "pr" ? test.prAggregate : test.baselineAggregate;
    if (aggregate && aggregate.runs > 0)
      counts.push({
        // The released payload knows a test the PR renamed by the baseline arm's name.
        name: arm === "baseline" ? (test.baselineName ?? test.name) : test.name,
        runs: aggregate.runs,
        passes: aggregate.passes,
        flakes: aggregate.flakes,
      });
  }
  return counts;
}
