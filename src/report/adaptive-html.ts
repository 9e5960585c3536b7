import { escapeXml as escapeHtml } from "../ote/junit-xml.ts";
import { adaptiveTestRows, type AdaptiveSummary } from "./adaptive-test-rows.ts";
import { upgradeSentences } from "./upgrade-sentences.ts";

/**
 * The report's section on an adaptive run: what was decided, what it cost (a crossover's upgrades
 * too), and why each test stopped.
 */
export function adaptiveHtml(summary: AdaptiveSummary): string {
  const count = (decision: string) => summary.tests.filter((t) => t.decision === decision).length;
  const upgrades = upgradeSentences(summary);
  const rows = adaptiveTestRows(summary)
    .map(
      (row) =>
        `<tr class="${row.decision === "regression" ? "regression" : row.decision === "clean" ? "stable" : "inconclusive"}"><td>${escapeHtml(row.name)}</td><td>${row.decision}${row.informing ? " (informing)" : ""}</td><td>${escapeHtml(row.stopped)}</td><td>${row.executions}</td><td>${row.clusters}</td><td>${escapeHtml(row.effect)}</td><td>${escapeHtml(row.reason)}</td></tr>`,
    )
    .join("\n");
  return `<section id="adaptive"><h2>Adaptive run (${escapeHtml(summary.design)}): why each test stopped</h2>
<p>${count("regression")} regression(s), ${count("clean")} clean, ${count("undecided")} undecided after ${summary.batches} batch(es); ${
    summary.stopped === "all tests decided"
      ? "the run stopped once every test was decided"
      : "the run stopped when its budget was spent"
  }. Cost: ${summary.spent} test executions of a budget of ${summary.budget}${
    summary.clusterHours !== undefined ? `, ${summary.clusterHours.toFixed(2)} cluster-hours` : ""
  }. Target: a rise from ${summary.target.from} to ${summary.target.to} in a test's failure probability.</p>
${upgrades.length > 0 ? `<p>${escapeHtml(upgrades.join(" "))}</p>\n` : ""}<p class="help">${escapeHtml(summary.method)}.</p>
${(summary.notes ?? [])
  .map(
    (note) => `<p class="help">${escapeHtml(note)}.</p>
`,
  )
  .join(
    "",
  )}<table class="adaptive"><thead><tr><th>test</th><th>decision</th><th>why it stopped</th><th>executions (PR / baseline)</th><th>clusters</th><th>effect it could see</th><th>evidence</th></tr></thead>
<tbody>
${rows}
</tbody></table></section>`;
}
