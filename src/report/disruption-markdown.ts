import { describeDisruptionArm } from "../analysis/disruption-compare.ts";
import type { DisruptionAnalysis } from "../analysis/disruption-types.ts";
import { formatPValue } from "../analysis/format-statistics.ts";
import { sortDisruptionRows } from "./disruption-rows.ts";
import { markdownCell } from "./markdown-cell.ts";

/** Rows the check run lists; the rest are counted and left to the report. */
const LISTED_ROWS = 12;

/**
 * The check run's short disruption section (markdown lines): counts, the rows worth a look, and
 * how they were judged. Empty when no test reported disruption. A few kilobytes at most.
 */
export function disruptionMarkdown(disruption: DisruptionAnalysis | undefined): string[] {
  if (!disruption) return [];
  const rows = sortDisruptionRows(disruption.rows);
  const { regression, inconclusive, stable } = disruption.counts;
  const notable = rows.filter((row) => row.verdict !== "stable" || (row.pr.max ?? 0) > 0);
  const listed = notable.slice(0, LISTED_ROWS);
  const seconds = (value: number | null) => (value === null ? "—" : `${value} s`);
  return [
    "",
    `**Disruption** (per test, path and connection): ${regression} regression(s) · ${inconclusive} inconclusive · ${stable} stable`,
    ...(listed.length > 0
      ? [
          "",
          "| verdict | test | path | PR | baseline | q | detectable ≥ |",
          "| --- | --- | --- | --- | --- | --- | --- |",
          ...listed.map(
            (row) =>
              `| ${row.verdict}${row.lifecycle === "informing" ? " (informing)" : ""} | ${markdownCell(row.test)} | ` +
              `${markdownCell(`${row.path} ${row.connection}`)} | ${markdownCell(describeDisruptionArm(row.pr))} | ` +
              `${markdownCell(describeDisruptionArm(row.baseline))} | ${row.qValue === null ? "—" : formatPValue(row.qValue)} | ` +
              `${row.minDetectableShiftSeconds === null ? "—" : `+${seconds(row.minDetectableShiftSeconds)}`} |`,
          ),
          ...(notable.length > listed.length
            ? [`\n… and ${notable.length - listed.length} more — see the full report`]
            : []),
        ]
      : []),
    "",
    `${disruption.method}; a regression needs q ≤ ${disruption.settings.q}, ${disruption.settings.minimumSamples} samples per arm and ` +
      `${disruption.settings.minimumShiftSeconds} s more disruption on average. P99 of fewer than 100 samples is their maximum. ` +
      `"Detectable ≥" is the extra disruption on every PR iteration these samples would have flagged.`,
  ];
}
