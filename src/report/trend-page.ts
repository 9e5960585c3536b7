import { escapeXml as escapeHtml } from "../ote/junit-xml.ts";
import type { ComponentChange, ComponentVersion } from "../payload/payload-changes.ts";
import { inlineScript, jsonForScript, pageHead, type ReportAssets } from "./html-report.ts";
import type { TrendChanges, TrendView } from "./trend-view.ts";

/** How many of the tests that moved most get a line in the overview chart. */
const CHARTED_MOVERS = 8;

const percent = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
const short = (commit: string | null) => (commit ? commit.slice(0, 12) : "?");

function link(url: string | null, text: string): string {
  return url ? `<a href="${escapeHtml(url)}">${escapeHtml(text)}</a>` : escapeHtml(text);
}

function versionText(version: ComponentVersion | null): string {
  if (!version) return "—";
  return version.commit
    ? link(version.commitUrl, short(version.commit))
    : escapeHtml(version.digest ?? version.pullspec);
}

/** One component's change: commits linked through their source location, and the comparison. */
function changeItem(change: ComponentChange): string {
  const what =
    change.kind === "added"
      ? `added at ${versionText(change.to)}`
      : change.kind === "removed"
        ? `removed (was ${versionText(change.from)})`
        : change.commitChanged
          ? `${versionText(change.from)} → ${versionText(change.to)}${change.compareUrl ? ` (${link(change.compareUrl, "compare")})` : ""}`
          : `rebuilt at ${versionText(change.to)} (new digest, same commit)`;
  return `<li data-tag="${escapeHtml(change.tag)}"><strong>${escapeHtml(change.tag)}</strong> ${what}</li>`;
}

function changesCell(changes: TrendChanges | null): string {
  if (changes === null) return `<span class="note">the oldest payload kept: nothing to compare with</span>`;
  if (!changes.known) return `<span class="note">not known: ${escapeHtml(changes.reason)}</span>`;
  if (changes.changes.length === 0)
    return `<span class="note">no component changed (${changes.unchanged} unchanged)</span>`;
  return (
    `<ul class="changes">${changes.changes.map(changeItem).join("")}</ul>` +
    `<span class="note">${changes.changes.length} changed, ${changes.unchanged} unchanged</span>`
  );
}

function payloadsSection(view: TrendView): string {
  const rows = view.payloads
    .map((payload, index) => ({ payload, index }))
    .reverse()
    .map(
      ({ payload, index }) =>
        `<tr data-index="${index}"><td class="mono" title="${escapeHtml(payload.payload)}">${escapeHtml(payload.release)}</td>` +
        `<td>${escapeHtml(payload.recordedAt)}</td><td class="num">${payload.runs}</td><td>${changesCell(payload.changes)}</td></tr>`,
    )
    .join("");
  return (
    `<section><h2>Payloads, newest first, and what changed in each</h2>` +
    `<p class="help">Components whose image digest or build commit differ from the payload before (release-manifests/image-references); commits link to their source repository.</p>` +
    `<div class="table-wrap"><table class="plan" id="payloads"><thead><tr><th>release</th><th>recorded</th><th>runs</th><th>changed since the payload before</th></tr></thead>` +
    `<tbody>${rows}</tbody></table></div></section>`
  );
}

function scanText(view: TrendView): string {
  return `The scan (false discovery rate ${percent(view.firstBadScan.q)} over the ${view.firstBadScan.familySize} test(s) that failed often enough to be flagged)`;
}

function firstBadSection(view: TrendView): string {
  if (view.firstBad.length === 0) {
    return `<section><h2>First bad payloads</h2><p class="help" id="no-first-bad">${escapeHtml(scanText(view))} found none: no test's failure rate rose at a payload of this history beyond chance.</p></section>`;
  }
  const rate = (counts: { executions: number; failures: number }) =>
    `${counts.failures}/${counts.executions} failed (${percent(counts.failures / Math.max(1, counts.executions))})`;
  const rows = view.firstBad
    .map(
      (finding) =>
        `<tr><td class="mono">${escapeHtml(finding.test)}</td><td class="mono" title="${escapeHtml(finding.payload)}">${escapeHtml(finding.release)}</td>` +
        `<td class="num">${rate(finding.before)}</td><td class="num">${rate(finding.after)}</td>` +
        `<td class="num">${percent(finding.falseAlarmRate)}</td>` +
        `<td>${finding.suspects === null ? `<span class="note">changes not known</span>` : finding.suspects.length === 0 ? `<span class="note">no component changed</span>` : `<ul class="changes">${finding.suspects.map(changeItem).join("")}</ul>`}</td></tr>`,
    )
    .join("");
  return (
    `<section><h2>First bad payloads</h2>` +
    `<p class="help">For each test whose failure rate rose: the earliest payload after which it rose (a changepoint on the per-payload counts) and the components that changed in that payload as suspects. ${escapeHtml(scanText(view))}; a finding's false-alarm rate is its q-value.</p>` +
    `<div class="table-wrap"><table class="plan" id="first-bad"><thead><tr><th>test</th><th>first bad payload</th><th>before</th><th>from then on</th><th>false-alarm rate</th><th>suspects: changed in that payload</th></tr></thead>` +
    `<tbody>${rows}</tbody></table></div></section>`
  );
}

/**
 * The trend page of a stream and arch (`/streams/<stream>/<arch>`): the first bad payloads with
 * their suspects and each payload's changes, rendered here; the charts and the sortable, filterable
 * test table drawn in the page from the inlined view, the same data `netstress trends -o json`
 * prints. Self-contained, like the report: nothing is loaded from elsewhere.
 */
export function renderTrendPage({ view, assets }: { view: TrendView; assets: ReportAssets }): string {
  const title = `Trends of ${view.stream} on ${view.arch}`;
  const first = view.payloads[0];
  const last = view.payloads.at(-1);
  return `${pageHead(title, assets.styles)}
<body>
<header>
<h1>${escapeHtml(title)}</h1>
<p class="meta">${view.payloads.length} payload(s)${first && last ? `, ${escapeHtml(first.release)} (${escapeHtml(first.recordedAt)}) to ${escapeHtml(last.release)} (${escapeHtml(last.recordedAt)})` : ""} · ${view.tests.length} tests · ${view.firstBad.length} first bad payload(s)</p>
</header>
<main>
${firstBadSection(view)}
<section><h2>Pass rates across payloads</h2>
<p class="help">The ${CHARTED_MOVERS} tests that moved most, one line each (a flaked iteration counts as failed).</p>
<div class="chart"><canvas id="movers-chart" data-lines="${CHARTED_MOVERS}"></canvas></div>
<p class="help">One test with its 95% Wilson interval on each payload: <span id="chart-test-name" class="mono"></span> (click a row of the table below to chart another).</p>
<div class="chart"><canvas id="test-chart"></canvas></div></section>
<section><h2>Tests</h2>
<p class="help">"Moved" is the pass rate on the newest payload a test ran on minus its pass rate pooled over the payloads before, in points; intervals are 95% Wilson.</p>
<div class="filters">
<label>search <input id="filter-text" type="search" placeholder="test name"></label>
<label><input id="filter-first-bad" type="checkbox"> with a first bad payload only</label>
<span id="row-count" aria-live="polite"></span>
</div>
<div class="table-wrap"><table id="verdicts" class="trend-tests"><thead><tr>
<th data-key="n" aria-sort="none">test</th><th data-key="latest" aria-sort="none">newest pass rate (95% CI)</th>
<th data-key="earlier" aria-sort="none">earlier pass rate (95% CI)</th><th data-key="moved" aria-sort="descending">moved (points)</th>
<th data-key="runs" aria-sort="none">iterations</th><th data-key="fb" aria-sort="none">first bad payload</th>
</tr></thead><tbody></tbody></table></div>
<button id="show-more" type="button" hidden>show more</button>
</section>
${payloadsSection(view)}
</main>
<script type="application/json" id="trend-data">${jsonForScript(view)}</script>
<script>${inlineScript(assets.chartJs)}</script>
<script>${inlineScript(assets.clientScript)}</script>
</body>
</html>
`;
}
