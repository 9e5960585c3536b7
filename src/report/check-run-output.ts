import { failedIterations } from "../analysis/failed-iterations.ts";
import { failsTheRun, isFlakyNewTest } from "../analysis/fails-the-run.ts";
import { formatPercent, formatPValue } from "../analysis/format-statistics.ts";
import type { Analysis, ArmCounts, TestVerdict } from "../analysis/types.ts";
import { VERDICT_CLASSES } from "../analysis/types.ts";
import { dominatedTests } from "./cluster-notes.ts";
import { disruptionMarkdown } from "./disruption-markdown.ts";
import { CLASS_LABEL, countLabel, sortByImportance } from "./importance.ts";
import type { LocatedFailure } from "./located-failures.ts";
import { markdownCell } from "./markdown-cell.ts";
import { inputNotes, type ReportContext } from "./report-context.ts";

/** GitHub's limits for a check run's output. */
export const CHECK_RUN_LIMITS = { title: 100, summary: 65_535, text: 65_535 } as const;

/** What a check run (and any run's status) shows: the text is the long part, absent on status updates. */
export interface CheckRunOutput {
  title: string;
  summary: string;
  text?: string;
  /** Failing tests with code locations: annotated on their source when the repository holds it. */
  locatedFailures?: LocatedFailure[];
}

function armCell(counts: ArmCounts): string {
  if (counts.runs === 0) return counts.skips > 0 ? `skipped ×${counts.skips}` : "—";
  const flakes = counts.flakes > 0 ? ` (${counts.flakes} flaked)` : "";
  return `${failedIterations(counts)}/${counts.runs}${flakes}`;
}

const TABLE_HEADER = [
  "| verdict | test | component | PR failed | baseline failed | p | q | detectable ≥ |",
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
];

function tableRow(test: TestVerdict): string {
  const informing = test.quarantine
    ? ` (quarantined since ${test.quarantine.since}: ${markdownCell(test.quarantine.reason)})`
    : test.lifecycle === "informing"
      ? " (informing)"
      : "";
  return (
    `| ${CLASS_LABEL[test.class].one}${informing} | ${markdownCell(test.name)} | ${markdownCell(test.component)} | ` +
    `${armCell(test.pr)} | ${armCell(test.baseline)} | ${test.pValue === null ? "—" : formatPValue(test.pValue)} | ` +
    `${test.qValue === null ? "—" : formatPValue(test.qValue)} | ` +
    `${test.minDetectableFailureRate === null ? "—" : formatPercent(test.minDetectableFailureRate)} |`
  );
}

/**
 * Joins a head and table rows, adding rows while they fit in `limit` characters; the rest are
 * summed up in a last line that points to the full report. Rows are rendered only as far as they fit.
 */
export function fitRows({
  head,
  count,
  row,
  limit,
}: {
  head: string;
  count: number;
  row: (index: number) => string;
  limit: number;
}): string {
  const tail = (n: number) => `\n\n… and ${n} more — see the full report`;
  const reserve = tail(count).length;
  let text = head;
  for (let index = 0; index < count; index++) {
    const line = `\n${row(index)}`;
    const last = index === count - 1;
    if (text.length + line.length + (last ? 0 : reserve) > limit) return text + tail(count - index);
    text += line;
  }
  return text;
}

export function checkRunTitle(analysis: Analysis): string {
  const blockingRegressions = analysis.tests.filter(
    (t) => t.class === "regression" && t.lifecycle === "blocking",
  ).length;
  const informingRegressions = analysis.counts.regression - blockingRegressions;
  const failingNew = analysis.tests.filter((t) => failsTheRun(t) && t.class === "new-test").length;
  const flakyNew = analysis.tests.filter(isFlakyNewTest).length;
  const parts: string[] = [];
  if (blockingRegressions > 0) parts.push(countLabel("regression", blockingRegressions));
  if (informingRegressions > 0)
    parts.push(`${informingRegressions} informing regression${informingRegressions === 1 ? "" : "s"}`);
  if (analysis.counts["new-flake"] > 0) parts.push(countLabel("new-flake", analysis.counts["new-flake"]));
  if (failingNew > 0) parts.push(`${failingNew} failing new test${failingNew === 1 ? "" : "s"}`);
  const disrupted = (analysis.disruption?.rows ?? []).filter(
    (row) => row.verdict === "regression" && row.lifecycle === "blocking",
  ).length;
  if (disrupted > 0) parts.push(`${disrupted} disrupted path${disrupted === 1 ? "" : "s"}`);
  if (flakyNew > 0) parts.push(`${flakyNew} flaky new test${flakyNew === 1 ? "" : "s"}`);
  const headline =
    parts.length > 0 ? parts.join(", ") : analysis.tests.length === 0 ? "No test results" : "No regressions";
  const arch = analysis.arch ?? "mixed arches";
  const clusters = analysis.clusters
    ? ` on ${analysis.clusters.counts.pr} cluster${analysis.clusters.counts.pr === 1 ? "" : "s"}`
    : "";
  const title = `${headline} — ${analysis.tests.length} tests × ${analysis.iterations.pr} runs${clusters}, ${arch}`;
  return title.length < CHECK_RUN_LIMITS.title ? title : `${title.slice(0, CHECK_RUN_LIMITS.title - 2)}…`;
}

/** How many "one cluster carried it" notes the summary lists before pointing to the report. */
const DOMINATED_NOTES = 10;

function regressionTest(analysis: Analysis): string {
  if (analysis.rule === "iteration") {
    return "A regression is a one-sided Fisher exact test (PR fails more often; a flaked iteration counts as failed)";
  }
  return (
    "Iterations are grouped by the cluster they ran on (the cluster rule). A regression is a one-sided exact test that the PR fails more often " +
    "(a flaked iteration counts as failed) in which each cluster's failures are beta-binomial, with the between-cluster dispersion " +
    "of each test moderated towards a prior fitted across all tests of similar failure rate; it is Fisher's test when the clusters do not differ"
  );
}

function method(analysis: Analysis): string {
  const { settings } = analysis;
  const against =
    analysis.baselineKind === "arm"
      ? `the released payload run side by side (${analysis.iterations.baseline} iterations)`
      : analysis.baselineKind === "history"
        ? "the pooled history of the released payload"
        : `the released payload run side by side (${analysis.iterations.baseline} iterations) and its pooled history`;
  return (
    `PR arm: ${analysis.iterations.pr} iterations, compared with ${against}. ` +
    `${regressionTest(analysis)}, ` +
    `with Benjamini–Hochberg q ≤ ${settings.q} over the ${analysis.familySize} test(s) that could reach significance, ` +
    `at least ${settings.minimumPrFailures} failed PR iterations and a pass-rate drop of more than ` +
    `${Math.round(settings.minimumPassRateDrop * 100)} points` +
    (analysis.baselineKind === "arm"
      ? ""
      : ", and failing the aggregator's required-passes rule against history") +
    `. "Detectable ≥" is the smallest PR failure rate these run counts${analysis.rule === "cluster" ? ", clusters and dispersions" : ""} would have caught with ` +
    `${Math.round(settings.power * 100)}% power; fewer than ${settings.minimumRuns} runs is inconclusive. ` +
    `Rule: ${analysis.ruleNote}.`
  );
}

/** Where tests without an area go: last, after every named one. */
const NO_AREA = "other tests";

/**
 * The area a test belongs to, as OpenShift teams file them: its `sig-*` label, else the `[sig-…]`
 * of its name (origin's convention, which most specs follow without labels).
 */
function areaOf(test: TestVerdict): string {
  return (
    test.labels?.find((label) => /^sig-[\w.-]+$/.test(label)) ??
    /\[(sig-[\w.-]+)\]/.exec(test.name)?.[1] ??
    NO_AREA
  );
}

/**
 * The notable tests in one table, most important first; when they span several areas, one table
 * per area instead, each under a heading with its counts, areas in the order of their most
 * important test: a reviewer sees at once which teams' tests the PR broke. Rows are added while
 * they fit in `limit`, as fitRows does.
 */
function notableTables(head: string, notable: readonly TestVerdict[], limit: number): string {
  const areas = new Map<string, TestVerdict[]>();
  for (const test of notable) {
    const area = areaOf(test);
    const tests = areas.get(area);
    if (tests) tests.push(test);
    else areas.set(area, [test]);
  }
  const unfiled = areas.get(NO_AREA);
  if (areas.size < 2) {
    return fitRows({
      head: `${head}\n\n${TABLE_HEADER.join("\n")}`,
      count: notable.length,
      row: (index) => tableRow(notable[index]!),
      limit,
    });
  }
  if (unfiled) {
    areas.delete(NO_AREA);
    areas.set(NO_AREA, unfiled);
  }
  const ordered: { test: TestVerdict; heading?: string }[] = [];
  for (const [area, tests] of areas) {
    const counts = VERDICT_CLASSES.map((cls) => [cls, tests.filter((t) => t.class === cls).length] as const)
      .filter(([, n]) => n > 0)
      .map(([cls, n]) => countLabel(cls, n))
      .join(" · ");
    tests.forEach((test, index) =>
      ordered.push(index === 0 ? { test, heading: `**${markdownCell(area)}** — ${counts}` } : { test }),
    );
  }
  return fitRows({
    head: `${head}\n\nBy area (a test's \`sig-*\` label, else the \`[sig-…]\` of its name):`,
    count: ordered.length,
    row: (index) => {
      const { test, heading } = ordered[index]!;
      return heading ? `\n${heading}\n\n${TABLE_HEADER.join("\n")}\n${tableRow(test)}` : tableRow(test);
    },
    limit,
  });
}

/** The check run's title, summary (most important rows first) and text (the whole table). */
export function renderCheckRunOutput(
  context: ReportContext,
): Required<Omit<CheckRunOutput, "locatedFailures">> {
  const { analysis } = context;
  const sorted = sortByImportance(analysis.tests);
  const counts = VERDICT_CLASSES.filter((cls) => analysis.counts[cls] > 0)
    .map((cls) => countLabel(cls, analysis.counts[cls]))
    .join(" · ");
  const notes = inputNotes(context).map((note) => `> ${markdownCell(note)}`);
  const dominated = dominatedTests(sorted.filter((test) => test.class !== "stable"));
  const dominatedLines = dominated
    .slice(0, DOMINATED_NOTES)
    .map(({ test, note }) => `> ${markdownCell(test.name)}: ${markdownCell(note)}`);
  if (dominated.length > DOMINATED_NOTES)
    dominatedLines.push(`> … and ${dominated.length - DOMINATED_NOTES} more — see the full report`);
  const summaryHead = [
    `**${analysis.conclusion}**: ${analysis.conclusionReason}.`,
    "",
    counts || "No tests.",
    ...(notes.length > 0 ? ["", ...notes] : []),
    ...(dominatedLines.length > 0
      ? ["", "One cluster carried most of these tests' failures:", ...dominatedLines]
      : []),
    "",
    method(analysis),
    ...disruptionMarkdown(analysis.disruption),
  ].join("\n");
  const notable = sorted.filter((test) => test.class !== "stable");
  const summary =
    notable.length === 0 ? summaryHead : notableTables(summaryHead, notable, CHECK_RUN_LIMITS.summary);
  const text =
    sorted.length === 0
      ? "No tests ran."
      : fitRows({
          head: `All ${sorted.length} tests, most important first. Reasons per test are in the HTML report.\n\n${TABLE_HEADER.join("\n")}`,
          count: sorted.length,
          row: (index) => tableRow(sorted[index]!),
          limit: CHECK_RUN_LIMITS.text,
        });
  return { title: checkRunTitle(analysis), summary, text };
}
