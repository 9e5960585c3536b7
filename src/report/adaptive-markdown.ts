import { adaptiveTestRows, type AdaptiveSummary } from "./adaptive-test-rows.ts";
import { markdownCell } from "./markdown-cell.ts";
import { upgradeSentences } from "./upgrade-sentences.ts";

/** Rows of the per-test table a check run shows; the rest are counted, and the report has them all. */
const SHOWN_TESTS = 60;

/**
 * The lead of an adaptive run's check run: what was decided, why the run stopped and what it
 * cost (a crossover's upgrades too), then per test why it stopped, its executions and clusters,
 * and the effect it could see.
 */
export function adaptiveMarkdown(summary: AdaptiveSummary): string {
  const count = (decision: string) => summary.tests.filter((t) => t.decision === decision).length;
  const rows = adaptiveTestRows(summary);
  const upgrades = upgradeSentences(summary);
  const shown = rows.slice(0, SHOWN_TESTS);
  const cost = [
    `${summary.spent} test executions of a budget of ${summary.budget}`,
    `${summary.batches} batch(es)`,
    ...(summary.clusterHours !== undefined ? [`${summary.clusterHours.toFixed(2)} cluster-hours`] : []),
  ].join(", ");
  const stopped =
    summary.stopped === "all tests decided"
      ? "it stopped once every test was decided"
      : "it stopped when its budget was spent, with tests still undecided";
  return [
    `**Adaptive run (${summary.design})** — ${count("regression")} regression(s), ${count("clean")} clean, ${count("undecided")} undecided; ${stopped}. Cost: ${cost}.`,
    "",
    ...(upgrades.length > 0 ? [upgrades.map(markdownCell).join(" "), ""] : []),
    `Target: a rise from ${summary.target.from} to ${summary.target.to} in a test's failure probability. ${markdownCell(summary.method)}.`,
    "",
    ...(summary.notes ?? []).flatMap((note) => [`Note — ${markdownCell(note)}.`, ""]),
    "| test | decision | why it stopped | executions (PR / baseline) | clusters | effect it could see |",
    "| --- | --- | --- | --- | --- | --- |",
    ...shown.map(
      (row) =>
        `| ${markdownCell(row.name)} | ${row.decision}${row.informing ? " (informing)" : ""} | ${row.stopped} | ${row.executions} | ${row.clusters} | ${markdownCell(row.effect)} |`,
    ),
    ...(rows.length > shown.length ? ["", `… and ${rows.length - shown.length} more in the report.`] : []),
  ].join("\n");
}
