import { adaptiveHtml } from "./adaptive-html.ts";
import { describeOutcome } from "../analysis/iteration-outcome.ts";
import { failedIterations } from "../analysis/failed-iterations.ts";
import { wilsonInterval } from "../analysis/wilson-interval.ts";
import type { Analysis, ArmAggregate, ArmCounts, TestVerdict } from "../analysis/types.ts";
import { VERDICT_CLASSES } from "../analysis/types.ts";
import { checkRunTitle } from "./check-run-output.ts";
import { disruptionHtml } from "./disruption-html.ts";
import { CLASS_LABEL, sortByImportance } from "./importance.ts";
import { escapeXml as escapeHtml } from "../ote/junit-xml.ts";
import { inputNotes, type ReportContext } from "./report-context.ts";

/** The browser side of the report, inlined so that the file works offline. */
export interface ReportAssets {
  /** Chart.js UMD build. */
  chartJs: string;
  clientScript: string;
  styles: string;
}

/** How many tests get a row in the per-iteration grid and a bar in the pass-rate chart. */
const CHARTED_TESTS = 40;

const OUTCOME_LETTER = { passed: "P", failed: "F", flaked: "K", skipped: "S", absent: "-" } as const;

function outcomeLetters(aggregate: ArmAggregate | undefined, iterations: number): string {
  let letters = "";
  for (let iteration = 0; iteration < iterations; iteration++) {
    letters += OUTCOME_LETTER[describeOutcome(aggregate?.outcomes[iteration] ?? 0)];
  }
  return letters;
}

/** Failed tests per iteration (a flaked test counts), per arm. */
function failuresPerIteration(analysis: Analysis, arm: "pr" | "baseline", iterations: number): number[] {
  const counts = new Array<number>(iterations).fill(0);
  for (const test of analysis.tests) {
    const aggregate = arm === "pr" ? test.prAggregate : test.baselineAggregate;
    aggregate?.outcomes.forEach((bits, iteration) => {
      const outcome = describeOutcome(bits);
      if ((outcome === "failed" || outcome === "flaked") && iteration < iterations) counts[iteration]!++;
    });
  }
  return counts;
}

function passRate(counts: ArmCounts): [number, number, number] | null {
  const interval = wilsonInterval({ successes: counts.runs - failedIterations(counts), trials: counts.runs });
  return interval
    ? [(counts.runs - failedIterations(counts)) / counts.runs, interval.low, interval.high]
    : null;
}

/** Pass rate and its interval to three decimals: enough for percentages, and a smaller page. */
function roundedRate(counts: ArmCounts): number[] | null {
  return passRate(counts)?.map((value) => Math.round(value * 1000) / 1000) ?? null;
}

const armArray = (c: ArmCounts) => [c.runs, c.passes, c.failures, c.flakes, c.skips];

/** Serialises data for a <script type="application/json"> block: nothing in it can close the tag. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<\u2028\u2029]/g, (character) => SCRIPT_ESCAPES[character]!);
}

const SCRIPT_ESCAPES: Record<string, string> = { "<": "\\u003c", "\u2028": "\\u2028", "\u2029": "\\u2029" };

/**
 * The document head every page of ours shares: self-contained (a CSP that allows nothing from
 * elsewhere), its styles inlined.
 */
export function pageHead(title: string, styles: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${styles}</style>
</head>`;
}

/** Inline scripts must not contain their own end tag. */
export function inlineScript(source: string): string {
  return source.replace(/<\/script/gi, "<\\/script");
}

/** The source commit a binary reports about itself (`<bin> info`), when the plan has no commit. */
function infoCommit(info: unknown): string | undefined {
  const commit = (info as { source?: { commit?: unknown } } | undefined)?.source?.commit;
  return typeof commit === "string" && commit !== "" ? `${commit} (from info)` : undefined;
}

function planSection(context: ReportContext): string {
  if (!context.plan.manifest) return `<p class="note">${escapeHtml(context.plan.note)}</p>`;
  const manifest = context.plan.manifest;
  const facts = [
    ["status", manifest.status],
    ["arch", manifest.arch],
    ["seed", manifest.seed],
    ["iterations", String(manifest.iterations)],
    ["parallel", String(manifest.parallel)],
    ["retries", String(manifest.retries)],
    ["network parallel", String(manifest.networkParallel ?? manifest.parallel)],
    ["suite", manifest.suite ?? "every listed test"],
    ["[Disruptive] tests", manifest.includeDisruptive ? "included" : "left out"],
    ["environment", describeEnvironment(manifest)],
    ["started", manifest.startedAt],
    ["finished", manifest.finishedAt ?? "—"],
  ];
  const rows = manifest.components
    .map(
      (c) =>
        `<tr><td>${escapeHtml(c.arm)}</td><td>${escapeHtml(c.component)}</td><td>${escapeHtml(c.source ?? "—")}</td>` +
        `<td class="mono">${escapeHtml(c.image ?? c.binary)}</td><td class="mono">${escapeHtml(c.digest ?? `sha256:${c.sha256}`)}</td>` +
        `<td class="mono">${escapeHtml(c.commit ?? infoCommit(c.info) ?? "—")}</td><td>${c.tests}</td>` +
        `<td>${escapeHtml(describeExcluded(c.excluded))}</td><td>${artifactLinks(c.artifacts, context.runDir ?? ".")}</td></tr>`,
    )
    .join("");
  const alone = manifest.components.flatMap((c) =>
    (c.alone ?? []).map((t) => ({ arm: c.arm, component: c.component, ...t })),
  );
  return (
    `<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${escapeHtml(v ?? "—")}</dd>`).join("")}</dl>` +
    `<table class="plan"><thead><tr><th>arm</th><th>component</th><th>source</th><th>binary from</th><th>digest</th>` +
    `<th>commit</th><th>tests</th><th>left out</th><th>artifacts</th></tr></thead><tbody>${rows}</tbody></table>` +
    `<h3>Ran alone</h3>` +
    (alone.length === 0
      ? `<p class="help">No test ran alone: none is [Serial], [Disruptive] or isolated from every other test.</p>`
      : `<p class="help">Nothing else ran on the cluster, in either arm, while these tests ran.</p>` +
        `<table class="plan" id="ran-alone"><thead><tr><th>arm</th><th>component</th><th>test</th><th>why</th></tr></thead><tbody>` +
        alone
          .map(
            (t) =>
              `<tr><td>${escapeHtml(t.arm)}</td><td>${escapeHtml(t.component)}</td><td>${escapeHtml(t.name)}</td><td>${ALONE_REASON[t.reason]}</td></tr>`,
          )
          .join("") +
        `</tbody></table>`)
  );
}

const ALONE_REASON = {
  serial: "[Serial]",
  disruptive: "[Disruptive]",
  isolation: "isolation conflicts with every test (*)",
} as const;

type ManifestComponent = NonNullable<ReportContext["plan"]["manifest"]>["components"][number];

function describeEnvironment(manifest: NonNullable<ReportContext["plan"]["manifest"]>): string {
  const values = Object.entries(manifest.environment ?? {}).map(
    ([key, value]) =>
      `${key}=${Array.isArray(value) ? value.join(",") : typeof value === "object" ? JSON.stringify(value) : String(value)}`,
  );
  const source = {
    cluster: "from the cluster under test",
    flags: "given",
    "cluster+flags": "from the cluster, with given values",
    none: "",
  }[manifest.environmentSource ?? "none"];
  return values.length === 0
    ? "none given: every test listed"
    : `${values.join(" ")}${source ? ` (${source})` : ""}`;
}

function describeExcluded(excluded: ManifestComponent["excluded"]): string {
  if (!excluded) return "—";
  const parts = [
    excluded.environment && `${excluded.environment} by environment`,
    excluded.suite && `${excluded.suite} outside the suite`,
    excluded.disruptive && `${excluded.disruptive} [Disruptive]`,
    excluded.focus && `${excluded.focus} by focus`,
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "none";
}

/** Links to the files the binary left in its artifact directory, relative to the report. */
function artifactLinks(artifacts: ManifestComponent["artifacts"], runDir: string): string {
  if (!artifacts) return "—";
  const href = (path: string) =>
    escapeHtml(
      [...runDir.split("/"), ...path.split("/")]
        .filter((part) => part !== "" && part !== ".")
        .map(encodeURIComponent)
        .join("/"),
    );
  const links = artifacts.files
    .map((f) => `<a href="${href(f.path)}">${escapeHtml(f.path.slice(artifacts.dir.length + 1))}</a>`)
    .join("<br>");
  return (
    links +
    (artifacts.omitted > 0 ? `<br><span class="note">${artifacts.omitted} more left out (limit)</span>` : "")
  );
}

/** What the build farm's pods' binaries wrote, per iteration, arm and component, and what did not arrive. */
function farmArtifactsSection(context: ReportContext): string {
  const artifacts = context.artifacts ?? [];
  if (artifacts.length === 0) return "";
  const rows = artifacts.flatMap((a) => {
    const groups = new Map<string, { arm: string; component: string; links: string[]; missing: string[] }>();
    const group = (arm: string, component: string) => {
      const key = `${arm}\0${component}`;
      const found = groups.get(key) ?? { arm, component, links: [], missing: [] };
      groups.set(key, found);
      return found;
    };
    for (const f of a.files)
      group(f.arm, f.component).links.push(
        `<a href="${escapeHtml(f.href)}" download>${escapeHtml(f.path)}</a> <span class="note">${f.bytes} B</span>`,
      );
    for (const o of a.omitted)
      group(o.arm ?? "—", o.component ?? "—").missing.push(
        `${o.path ? `${escapeHtml(o.path)}: ` : ""}${escapeHtml(o.reason)}`,
      );
    return [...groups.values()].map(
      (g) =>
        `<tr><td>${a.iteration}</td><td>${escapeHtml(g.arm)}</td><td>${escapeHtml(g.component)}</td>` +
        `<td>${g.links.join("<br>") || "—"}</td><td>${g.missing.map((m) => `<span class="note">${m}</span>`).join("<br>") || "—"}</td></tr>`,
    );
  });
  const files = artifacts.reduce((sum, a) => sum + a.files.length, 0);
  return (
    `<section id="farm-artifacts"><h2>Artifacts from the build farm</h2>` +
    `<p class="help">${files} file(s) the test binaries wrote to EXTENSION_ARTIFACT_DIR in their pods, streamed with the results; downloads, never shown inline.</p>` +
    `<table class="plan"><thead><tr><th>iteration</th><th>arm</th><th>component</th><th>files</th><th>not collected</th></tr></thead><tbody>${rows.join("")}</tbody></table></section>`
  );
}

function detailsSection(context: ReportContext): string {
  const details = context.input.details;
  if (details.length === 0) return "";
  const rows = details
    .map(
      (d) =>
        `<tr><td>${escapeHtml(d.arm)}</td><td>${escapeHtml(d.component)}</td><td>${escapeHtml(d.name)}</td>` +
        `<td>${d.iteration}${d.attempt > 0 ? ` retry ${d.attempt}` : ""}</td><td>${escapeHtml(d.result)}</td><td class="mono">${escapeHtml(d.details)}</td></tr>`,
    )
    .join("");
  return (
    `<section><h2>Details the tests reported</h2><p class="help">The binaries' own details[] (at most 3 executions per test and arm).</p>` +
    `<div class="table-wrap"><table class="plan" id="details"><thead><tr><th>arm</th><th>component</th><th>test</th><th>iteration</th><th>result</th><th>details</th></tr></thead>` +
    `<tbody>${rows}</tbody></table></div></section>`
  );
}

/**
 * The cluster × test grid: for each charted test, failed/run iterations on every cluster of each
 * arm, with the clusters that failed many tests at once marked bad. Null without the cluster rule.
 */
function clusterGrid(analysis: Analysis, charted: readonly TestVerdict[]) {
  if (!analysis.clusters) return null;
  const clusters = analysis.clusters.weather.map((cluster) => ({
    a: cluster.arm,
    n: cluster.cluster,
    bad: cluster.bad,
    r: Math.round(cluster.ratio * 100) / 100,
  }));
  const rows = charted.map((test) => {
    const counts = new Map(
      [
        ...(test.clusters?.pr ?? []).map((c) => ["pr", c] as const),
        ...(test.clusters?.baseline ?? []).map((c) => ["baseline", c] as const),
      ].map(([arm, count]) => [`${arm}\u0000${count.cluster}`, [count.runs, count.failed]]),
    );
    return {
      n: test.name,
      k: test.class,
      c: clusters.map((cluster) => counts.get(`${cluster.a}\u0000${cluster.n}`) ?? null),
      d: test.clusters?.dominant?.cluster ?? null,
    };
  });
  return { clusters, rows };
}

function methodText(analysis: Analysis): string {
  const { settings } = analysis;
  const test =
    analysis.rule === "cluster"
      ? "Iterations are grouped by the cluster they ran on (the cluster rule): a regression is a one-sided exact test that the PR fails more often than the baseline in which each cluster's failures are beta-binomial, the between-cluster dispersion of each test moderated towards a prior fitted across all tests of similar failure rate (empirical Bayes), conditioned on the total failures (Fisher's test when the clusters do not differ),"
      : "A regression is a one-sided Fisher exact test that the PR fails more often than the baseline (exact, in log space), every iteration counted as an independent draw (the iteration rule),";
  return (
    `${test} with Benjamini–Hochberg at q = ${settings.q} over the ${analysis.familySize} test(s) that could reach significance at their run counts, ` +
    `at least ${settings.minimumPrFailures} failed PR iterations and a pass-rate drop of more than ${Math.round(settings.minimumPassRateDrop * 100)} points. ` +
    `"Detectable ≥" is the smallest PR failure rate these run counts${analysis.rule === "cluster" ? ", clusters and dispersions" : ""} would have caught with ${Math.round(settings.power * 100)}% power. ` +
    `Fewer than ${settings.minimumRuns} runs in an arm is inconclusive, never passed. Informing tests never fail the run. ${analysis.ruleNote}.`
  );
}

/**
 * A single self-contained HTML file: verdict summary, pass rates with 95% Wilson intervals, a
 * per-iteration failure timeline, the sortable and filterable verdict table, and the plan. Scripts
 * and data are inlined and a Content-Security-Policy forbids any network access.
 */
export function renderHtmlReport({
  context,
  assets,
}: {
  context: ReportContext;
  assets: ReportAssets;
}): string {
  const { analysis } = context;
  const title = checkRunTitle(analysis);
  const iterations = analysis.tests.reduce(
    (most, t) =>
      Math.max(most, t.prAggregate?.outcomes.length ?? 0, t.baselineAggregate?.outcomes.length ?? 0),
    0,
  );
  const sorted = sortByImportance(analysis.tests);
  const charted = sorted
    .filter((test) => test.class !== "stable" && (test.pr.runs > 0 || test.baseline.runs > 0))
    .slice(0, CHARTED_TESTS);
  const disruption = disruptionHtml(analysis.disruption);
  const data = {
    classes: VERDICT_CLASSES.map((cls) => ({
      id: cls,
      label: CLASS_LABEL[cls].one,
      count: analysis.counts[cls],
    })),
    tests: sorted.map((test) => ({
      n: test.name,
      c: test.component,
      // Labels and tags (as key=value), which the text filter searches too.
      g: [...(test.labels ?? []), ...Object.entries(test.tags ?? {}).map(([k, v]) => `${k}=${v}`)],
      // A quarantined test shows why in its lifecycle cell (and filters as informing).
      l: test.quarantine
        ? `informing (quarantined since ${test.quarantine.since}: ${test.quarantine.reason})`
        : test.lifecycle,
      k: test.class,
      r: test.reason,
      pr: armArray(test.pr),
      b: armArray(test.baseline),
      p: test.pValue,
      q: test.qValue,
      m: test.minDetectableFailureRate,
      pc: roundedRate(test.pr),
      bc: roundedRate(test.baseline),
    })),
    rates: charted.map((test) => ({
      n: test.name,
      k: test.class,
      pr: passRate(test.pr),
      b: passRate(test.baseline),
    })),
    timeline: {
      pr: failuresPerIteration(analysis, "pr", iterations),
      baseline: failuresPerIteration(analysis, "baseline", iterations),
    },
    grid: charted.map((test) => ({
      n: test.name,
      k: test.class,
      pr: outcomeLetters(test.prAggregate, iterations),
      b: outcomeLetters(test.baselineAggregate, iterations),
    })),
    clusterGrid: clusterGrid(analysis, charted),
    disruption: disruption?.charts ?? [],
  };
  const notes = inputNotes(context);
  return `${pageHead(title, assets.styles)}
<body>
<header class="conclusion-${analysis.conclusion}">
<h1>${escapeHtml(title)}</h1>
<p><strong class="badge">${analysis.conclusion}</strong> ${escapeHtml(analysis.conclusionReason)}.</p>
<p class="meta">arch ${escapeHtml(analysis.arch ?? "mixed")} · PR ${analysis.iterations.pr} iterations${
    analysis.clusters ? ` on ${analysis.clusters.counts.pr} cluster(s)` : ""
  } · baseline ${escapeHtml(
    analysis.baselineKind === "history"
      ? "pooled history"
      : `${analysis.iterations.baseline} iterations${analysis.clusters ? ` on ${analysis.clusters.counts.baseline} cluster(s)` : ""}`,
  )} · ${analysis.tests.length} tests · generated ${escapeHtml(context.generatedAt)}</p>
${notes.length > 0 ? `<ul class="notes">${notes.map((note) => `<li>${escapeHtml(note)}</li>`).join("")}</ul>` : ""}
</header>
<main>
${context.adaptive ? adaptiveHtml(context.adaptive) : ""}
<nav id="class-counts" aria-label="verdict classes"></nav>
<section><h2>Pass rates, PR against baseline</h2>
<p class="help">The ${charted.length} most important tests that are not stable; bars are 95% Wilson intervals, dots the observed pass rate (a flaked iteration counts as failed).</p>
<div class="chart"><canvas id="rates-chart"></canvas></div></section>
<section><h2>Failures per iteration</h2>
<div class="chart short"><canvas id="timeline-chart"></canvas></div>
<p class="help">Each cell is one iteration: <span class="cell P">P</span> passed, <span class="cell K">K</span> flaked (failed, then passed on retry), <span class="cell F">F</span> failed, <span class="cell S">S</span> skipped, <span class="cell none">-</span> did not run.</p>
<div class="grid-wrap"><table id="timeline-grid" class="grid"></table></div></section>
${
  analysis.clusters
    ? `<section id="clusters"><h2>Failures per cluster</h2>
<p class="help">Each cell is one test on one cluster under test: failed/run iterations (a flake counts as failed), darker the more failed. <span class="bad-mark">bad</span> marks a cluster that failed many tests at once (at least 1.5× a typical cluster, beyond chance); × is how many times the failures its tests' rates predict. A ringed cell is the cluster that carried most of the test's failures.</p>
<div class="grid-wrap"><table id="cluster-grid" class="grid"></table></div></section>`
    : ""
}
${disruption?.html ?? ""}
<section><h2>Verdicts</h2>
<div class="filters">
<label>search <input id="filter-text" type="search" placeholder="test, component, label or tag"></label>
<label>verdict <select id="filter-class"><option value="">all</option></select></label>
<label>lifecycle <select id="filter-lifecycle"><option value="">all</option><option>blocking</option><option>informing</option></select></label>
<span id="row-count" aria-live="polite"></span>
</div>
<div class="table-wrap"><table id="verdicts"><thead><tr>
<th data-key="k" aria-sort="none">verdict</th><th data-key="n" aria-sort="none">test</th><th data-key="c" aria-sort="none">component</th>
<th data-key="l" aria-sort="none">lifecycle</th><th data-key="prf" aria-sort="none">PR failed</th><th data-key="bf" aria-sort="none">baseline failed</th>
<th data-key="pc" aria-sort="none">PR pass rate (95% CI)</th><th data-key="bc" aria-sort="none">baseline pass rate (95% CI)</th>
<th data-key="p" aria-sort="none">p</th><th data-key="q" aria-sort="none">q</th><th data-key="m" aria-sort="none">detectable ≥</th><th>why</th>
</tr></thead><tbody></tbody></table></div>
<button id="show-more" type="button" hidden>show more</button>
</section>
${detailsSection(context)}
<section><h2>Plan: which binary came from where, and which tests ran</h2>${planSection(context)}</section>
${farmArtifactsSection(context)}
<section><h2>Method</h2><p class="help">${escapeHtml(methodText(analysis))}</p></section>
</main>
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
<script>${inlineScript(assets.chartJs)}</script>
<script>${inlineScript(assets.clientScript)}</script>
</body>
</html>
`;
}
