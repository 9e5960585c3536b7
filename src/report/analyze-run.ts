import { mkdir, writeFile } from "node:fs/promises";
import { z } from "zod";
import { dirname, join, relative, resolve } from "node:path";
import { compareDisruption } from "../analysis/disruption-compare.ts";
import { withDisruption } from "../analysis/disruption-conclusion.ts";
import { judgeTests } from "../analysis/judge-tests.ts";
import { createResultsAggregator, type ResultsAggregator } from "../analysis/results-aggregator.ts";
import { quarantineTests, type QuarantineEntry } from "../analysis/quarantine.ts";
import type { HistoryBaseline } from "../analysis/history-baseline-schema.ts";
import type { Analysis, AnalysisConclusion, AnalysisSettings } from "../analysis/types.ts";
import { AnalysisInputError } from "./analysis-input-error.ts";
import { renderCheckRunOutput, type CheckRunOutput } from "./check-run-output.ts";
import { findResultsFiles } from "./find-results-files.ts";
import { locatedFailures } from "./located-failures.ts";
import { renderHtmlReport, type ReportAssets } from "./html-report.ts";
import { loadReportAssets } from "./report-assets.ts";
import type { ReportContext } from "./report-context.ts";
import { historyByTest } from "./history-by-test.ts";
import { readHistory } from "./read-history.ts";
import { readIterationArtifacts, relativeHref } from "./read-iteration-artifacts.ts";
import { emptyInputReport, readResults } from "./read-results.ts";
import type { AdaptiveSummary } from "./adaptive-test-rows.ts";
import { readRunManifest } from "./read-run-manifest.ts";
import { buildSummaryJson } from "./summary-json.ts";
import { renderVerdictJunit } from "./verdict-junit.ts";

/** A pooled history as its store read it: the pool's size and age, and per-test counts. */
export type PooledBaseline = Pick<HistoryBaseline, "stream" | "runs" | "from" | "to"> & {
  tests: readonly { name: string; runs: number; passes: number }[];
};

export interface AnalyzeRunOptions {
  /**
   * results.jsonl files, or directories holding them. Their `pr` records are the PR arm; without
   * `baseline`, their `baseline` records are the baseline arm — the runner writes both arms into one
   * results.jsonl, so `{ pr: [outDir] }` analyzes a side-by-side run.
   */
  pr: string | readonly string[];
  /** Results of the released payload, when they are in other files (any arm label). */
  baseline?: string | readonly string[];
  /**
   * A pooled history baseline: a file (see historyBaselineSchema), or the pool itself as its store
   * read it, with what the report calls it (e.g. "of stream 4.18-nightly (amd64)").
   */
  history?: string | { baseline: PooledBaseline; source: string };
  /** Where the reports go; created when missing. */
  outDir: string;
  /** The runner's run.json; by default the one beside the first PR results file, if any. */
  manifest?: string;
  settings?: AnalysisSettings;
  /** Tests that never fail the conclusion (judged as informing, shown as quarantined). */
  quarantine?: readonly QuarantineEntry[];
  /** Lines every report shows besides what the input says (e.g. iterations the infrastructure lost). */
  notes?: readonly string[];
  /** An adaptive run's decisions: the report shows why each test stopped. */
  adaptive?: AdaptiveSummary;
  /**
   * The link of a build-farm artifact file (its absolute path): the bot serves them at its own
   * address. By default, relative to the report.
   */
  artifactHref?: (file: string) => string;
  /** Injected for tests; the installed Chart.js and the report's own script otherwise. */
  assets?: ReportAssets;
  now?: () => Date;
}

export interface ReportPaths {
  html: string;
  summaryJson: string;
  junit: string;
  checkRun: string;
}

export interface AnalyzeRunResult {
  conclusion: AnalysisConclusion;
  title: string;
  paths: ReportPaths;
  analysis: Analysis;
  checkRun: Required<CheckRunOutput>;
}

const list = (value: string | readonly string[] | undefined): readonly string[] =>
  value === undefined ? [] : typeof value === "string" ? [value] : value;

async function expand(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) files.push(...(await findResultsFiles(path)));
  return files;
}

/**
 * Reads results (streaming), judges every test, and writes report.html, summary.json,
 * junit.xml-style verdicts (verdicts.junit.xml) and check-run.json to outDir. This is what
 * `netstress analyze` and the end of `netstress run` call.
 */
export async function analyzeRun(options: AnalyzeRunOptions): Promise<AnalyzeRunResult> {
  const prFiles = await expand(list(options.pr));
  if (prFiles.length === 0) throw new AnalysisInputError("no PR results given");
  const baselineFiles = await expand(list(options.baseline));
  const aggregator = recordingCodeLocations(createResultsAggregator());
  const input = emptyInputReport();
  await readResults({ files: prFiles, role: "pr", aggregator, report: input });
  await readResults({ files: baselineFiles, role: "baseline", aggregator, report: input });
  const { run, mark } = quarantineTests(aggregator.finish(), options.quarantine ?? []);
  if (run.arches.length > 1) {
    throw new AnalysisInputError(
      `the results mix architectures (${run.arches.join(", ")}); analyze one arch at a time`,
    );
  }
  const history =
    typeof options.history === "string"
      ? { source: options.history, ...(await readHistory(options.history)) }
      : options.history
        ? { ...options.history, byTest: historyByTest(options.history.baseline.tests) }
        : undefined;
  const judged = judgeTests({
    run,
    ...(history ? { history: history.byTest } : {}),
    ...(options.settings ? { settings: options.settings } : {}),
  });
  const analysis = withDisruption({
    analysis: { ...judged, tests: mark(judged.tests) },
    disruption: compareDisruption({ run, unit: judged.rule, onePerArm: judged.clusters?.onePerArm ?? false }),
  });
  const farm = await readIterationArtifacts({
    resultsFiles: prFiles,
    href: options.artifactHref ?? ((file) => relativeHref(options.outDir, file)),
  });
  const notes = [...(options.notes ?? []), ...farm.notes];
  const manifestPath = options.manifest ?? join(dirname(prFiles[0]!), "run.json");
  const context: ReportContext = {
    analysis,
    input: { ...input, records: run.records, duplicates: run.duplicates },
    ...(notes.length ? { notes } : {}),
    ...(options.adaptive ? { adaptive: options.adaptive } : {}),
    ...(farm.artifacts.length ? { artifacts: farm.artifacts } : {}),
    plan: await readRunManifest(manifestPath),
    runDir: relative(resolve(options.outDir), dirname(resolve(manifestPath))) || ".",
    ...(history
      ? {
          history: {
            source: history.source,
            tests: history.byTest.size,
            ...(history.baseline.runs !== undefined ? { runs: history.baseline.runs } : {}),
            ...(history.baseline.from ? { from: history.baseline.from } : {}),
            ...(history.baseline.to ? { to: history.baseline.to } : {}),
            ...(history.baseline.stream ? { stream: history.baseline.stream } : {}),
          },
        }
      : {}),
    generatedAt: (options.now ?? (() => new Date()))().toISOString(),
  };

  const outDir = resolve(options.outDir);
  await mkdir(outDir, { recursive: true });
  const paths: ReportPaths = {
    html: join(outDir, "report.html"),
    summaryJson: join(outDir, "summary.json"),
    junit: join(outDir, "verdicts.junit.xml"),
    checkRun: join(outDir, "check-run.json"),
  };
  const checkRun = {
    ...renderCheckRunOutput(context),
    locatedFailures: locatedFailures(analysis.tests, aggregator.codeLocations),
  };
  const assets = options.assets ?? (await loadReportAssets());
  // One report at a time: each big string is written and dropped before the next is built.
  await writeFile(paths.html, renderHtmlReport({ context, assets }));
  // Compact: summary.json is for programs (the HTML report is for people), and it is large for big runs.
  await writeFile(paths.summaryJson, `${JSON.stringify(buildSummaryJson(context))}\n`);
  await writeFile(paths.junit, renderVerdictJunit(analysis));
  await writeFile(
    paths.checkRun,
    `${JSON.stringify({ conclusion: analysis.conclusion, output: checkRun }, null, 2)}\n`,
  );
  return { conclusion: analysis.conclusion, title: checkRun.title, paths, analysis, checkRun };
}

const codeLocationsSchema = z.array(z.string().min(1)).optional();

/**
 * The aggregator, also noting each test's spec code locations from its PR records (records carry
 * them once the runner copies them from the binary's listing; older records have none).
 */
function recordingCodeLocations(
  aggregator: ResultsAggregator,
): ResultsAggregator & { codeLocations: ReadonlyMap<string, readonly string[]> } {
  const codeLocations = new Map<string, readonly string[]>();
  return {
    ...aggregator,
    add(record, role) {
      if (role !== "baseline" && record.arm === "pr" && !codeLocations.has(record.name)) {
        const parsed = codeLocationsSchema.safeParse((record as { codeLocations?: unknown }).codeLocations);
        if (parsed.success && parsed.data?.length) codeLocations.set(record.name, parsed.data);
      }
      aggregator.add(record, role);
    },
    codeLocations,
  };
}
