import { join } from "node:path";
import { adaptiveConclusion } from "../runs/adaptive-conclusion.ts";
import { adaptiveSummary } from "../runs/adaptive-summary.ts";
import type { AnalyzeRunResults } from "../runs/analyze-port.ts";
import { lostIterationNotes } from "../runs/lost-iteration-notes.ts";
import type { RunRecord } from "../runs/run-record.ts";
import { runWording } from "../runs/run-wording.ts";
import { runArtifactHref } from "./run-artifacts.ts";
import { applyAndPublish, type RunDeps } from "./run-deps.ts";
import { runDir } from "./run-dir.ts";

/**
 * The end of a run whose executions all finished: analyzes every result set it holds (those of the
 * run it extends included) with its plan, writes the report under its report/ directory, and
 * concludes it from the analysis (an adaptive run also from its decisions).
 */
export async function analyzeAndConclude(input: {
  deps: RunDeps;
  analyze: AnalyzeRunResults;
  /** The run, analyzing: its result sets, plan and adaptive decisions. */
  run: RunRecord;
  /** Lines the report shows besides those the run's own record gives (e.g. why it ran as a fixed run). */
  notes: readonly string[];
  dataDir: string;
  publicUrl?: string;
}): Promise<void> {
  const { run } = input;
  const dir = runDir(input.dataDir, run.id);
  const adaptive = adaptiveSummary(run, new Date());
  const analysis = await input.analyze({
    run,
    resultsPaths: run.results.map((s) => s.resultsPath),
    outDir: join(dir, "report"),
    notes: [
      ...[runWording.upgradeRun(run)].filter((n) => n !== undefined),
      ...input.notes,
      ...lostIterationNotes(run.results.flatMap((s) => s.lost ?? [])),
    ],
    ...(adaptive ? { adaptive } : {}),
    artifactHref: runArtifactHref({
      runDir: dir,
      runId: run.id,
      ...(input.publicUrl ? { publicUrl: input.publicUrl } : {}),
    }),
  });
  await applyAndPublish(input.deps, run.id, { type: "analyzed", ...adaptiveConclusion(run, analysis) });
}
