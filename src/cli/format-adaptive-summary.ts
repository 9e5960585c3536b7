import { adaptiveTestRows, type AdaptiveSummary } from "../report/adaptive-test-rows.ts";

/**
 * An adaptive run's decisions as the CLI prints them: what was decided and why the run stopped,
 * then per test its decision, when it stopped and why (the report's table, as text).
 */
export function formatAdaptiveSummary(summary: AdaptiveSummary): string {
  const rows = adaptiveTestRows(summary);
  const count = (decision: string) => rows.filter((row) => row.decision === decision).length;
  const stopped =
    summary.stopped === "all tests decided"
      ? "it stopped once every test was decided"
      : "it stopped when its budget was spent, with tests still undecided";
  return [
    `adaptive run (${summary.design}): ${count("regression")} regression(s), ${count("clean")} clean, ${count("undecided")} undecided; ${stopped}, ` +
      `after ${summary.batches} batch(es) and ${summary.spent} of a budget of ${summary.budget} test executions`,
    "why each test stopped:",
    ...rows.map(
      (row) =>
        `  ${row.decision.padEnd(10)}  ${row.name}\n` +
        `              ${row.stopped}: ${row.effect}; ${row.reason}; executions ${row.executions} (PR / baseline)`,
    ),
    "",
  ].join("\n");
}
