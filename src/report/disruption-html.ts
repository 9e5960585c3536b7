import { describeDisruptionArm } from "../analysis/disruption-compare.ts";
import type { DisruptionAnalysis, DisruptionSample } from "../analysis/disruption-types.ts";
import { formatPValue } from "../analysis/format-statistics.ts";
import { escapeXml as escapeHtml } from "../ote/junit-xml.ts";
import { sortDisruptionRows } from "./disruption-rows.ts";

/** Tests charted, iterations per arm and intervals per chart: a report stays a few megabytes at most. */
const CHARTED_TESTS = 8;
const CHARTED_ITERATIONS = 50;
const CHARTED_INTERVALS = 2_000;

/** One test's timeline: a row per arm and iteration, bars [row, from s, to s, reason] per path. */
export interface DisruptionChart {
  n: string;
  rows: string[];
  series: { label: string; bars: [number, number, number, string][] }[];
  omitted: number;
}

/** Where a sample's timeline starts: its startTime, or its first interval when that is earlier or missing. */
function originOf(sample: DisruptionSample): number {
  const first = Math.min(
    ...sample.entries.flatMap((entry) => entry.intervals.map((interval) => Date.parse(interval.from))),
  );
  const started = sample.startTime
    ? Date.parse(sample.startTime.replace(" UTC", "Z").replace(" ", "T"))
    : Number.NaN;
  return Number.isFinite(started) && !(started > first) ? started : first;
}

function chartOf(
  test: string,
  arms: { pr: readonly DisruptionSample[]; baseline: readonly DisruptionSample[] },
): DisruptionChart | null {
  const rows: string[] = [];
  const series = new Map<string, [number, number, number, string][]>();
  let bars = 0;
  let omitted = 0;
  for (const [arm, samples] of [
    ["PR", arms.pr],
    ["baseline", arms.baseline],
  ] as const) {
    for (const sample of samples.slice(0, CHARTED_ITERATIONS)) {
      if (!sample.entries.some((entry) => entry.intervals.length > 0)) continue;
      const row = rows.push(`${arm} #${sample.iteration}${sample.cluster ? ` ${sample.cluster}` : ""}`) - 1;
      const origin = originOf(sample);
      for (const entry of sample.entries) {
        const label = `${entry.path} ${entry.connection}`;
        let list = series.get(label);
        if (!list) series.set(label, (list = []));
        for (const interval of entry.intervals) {
          if (bars >= CHARTED_INTERVALS) {
            omitted++;
            continue;
          }
          bars++;
          const at = (instant: string) => Math.round((Date.parse(instant) - origin) / 100) / 10;
          list.push([row, at(interval.from), at(interval.to), interval.reason.slice(0, 200)]);
        }
      }
    }
  }
  if (rows.length === 0) return null;
  return {
    n: test,
    rows,
    series: [...series.entries()]
      .filter(([, list]) => list.length > 0)
      .map(([label, list]) => ({ label, bars: list })),
    omitted,
  };
}

/** The report's disruption section and its charts' data; null when no test reported disruption. */
export function disruptionHtml(
  disruption: DisruptionAnalysis | undefined,
): { html: string; charts: DisruptionChart[] } | null {
  if (!disruption) return null;
  const charts = disruption.samples
    .map((test) => chartOf(test.test, test))
    .filter((chart) => chart !== null)
    .slice(0, CHARTED_TESTS);
  const seconds = (value: number | null) => (value === null ? "—" : `${value} s`);
  const rows = sortDisruptionRows(disruption.rows)
    .map(
      (row) =>
        `<tr class="disruption-${row.verdict}"><td>${row.verdict}${row.lifecycle === "informing" ? " (informing)" : ""}</td>` +
        `<td>${escapeHtml(row.test)}</td><td>${escapeHtml(row.path)}</td><td>${row.connection}</td>` +
        `<td>${escapeHtml(describeDisruptionArm(row.pr))}</td><td>${escapeHtml(describeDisruptionArm(row.baseline))}</td>` +
        `<td>${row.pr.overBudget}/${row.pr.samples} · ${row.baseline.overBudget}/${row.baseline.samples}</td>` +
        `<td>${row.qValue === null ? "—" : formatPValue(row.qValue)}</td>` +
        `<td>${row.minDetectableShiftSeconds === null ? "—" : `+${seconds(row.minDetectableShiftSeconds)}`}</td>` +
        `<td>${escapeHtml(row.reason)}</td></tr>`,
    )
    .join("");
  const { settings } = disruption;
  const chartBlocks = charts
    .map(
      (chart, index) =>
        `<h3>${escapeHtml(chart.n)}</h3>` +
        `<div class="chart" style="height:${Math.min(900, 80 + 18 * chart.rows.length)}px"><canvas id="disruption-chart-${index}"></canvas></div>` +
        (chart.omitted > 0 ? `<p class="note">${chart.omitted} more interval(s) not drawn (limit)</p>` : ""),
    )
    .join("");
  const html =
    `<section id="disruption"><h2>Disruption per path, PR against baseline</h2>` +
    `<p class="help">${escapeHtml(disruption.method)}. A regression needs q ≤ ${settings.q}, at least ${settings.minimumSamples} samples per arm and ` +
    `${settings.minimumShiftSeconds} s more disruption on average. P50/P99 are nearest-rank percentiles of disruptedSeconds over iterations; ` +
    `P99 of fewer than 100 samples is their maximum and says so. "Over budget" counts iterations above the budget the test reported. ` +
    `"Detectable ≥" is the extra disruption on every PR iteration these samples would have flagged.</p>` +
    `<div class="table-wrap"><table class="plan" id="disruption-table"><thead><tr><th>verdict</th><th>test</th><th>path</th><th>connection</th>` +
    `<th>PR</th><th>baseline</th><th>over budget (PR · baseline)</th><th>q</th><th>detectable ≥</th><th>why</th></tr></thead><tbody>${rows}</tbody></table></div>` +
    (charts.length > 0
      ? `<h3>Timeline</h3><p class="help">Each bar is one interval a path was failing, in seconds since the test started, one row per arm and iteration that saw any (at most ${CHARTED_ITERATIONS} iterations per arm).</p>${chartBlocks}`
      : `<p class="help">No interval of disruption in any iteration.</p>`) +
    `</section>`;
  return { html, charts };
}
