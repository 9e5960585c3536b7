import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { AnalyzeRunResults } from "../queue/process-execute.ts";
import { analyzeRun } from "../report/analyze-run.ts";
import { armHistory } from "./arm-history.ts";
import type { HistoryStore } from "./history-store.ts";

/**
 * The analysis port of PR runs with the history pool: baseline=history compares the PR arm with the
 * pool of the run's release stream and arch (written beside the report as history.json, so the
 * report states the pool's size and age); every run's baseline arm joins that pool afterwards.
 * An empty pool judges nothing: the run ends neutral and says so.
 */
export function createHistoryAnalyzer(options: {
  history: HistoryStore;
  log: Logger;
  analyze?: typeof analyzeRun;
}): AnalyzeRunResults {
  const { history, log, analyze = analyzeRun } = options;
  return async ({ run, resultsPaths, outDir, notes }) => {
    const stream = run.source.releaseStream;
    const pool =
      run.options.baseline === "history" && stream
        ? await history.read({ stream, arch: run.arch })
        : undefined;
    let historyPath: string | undefined;
    if (pool && pool.runs > 0) {
      await mkdir(outDir, { recursive: true });
      historyPath = join(outDir, "history.json");
      await writeFile(historyPath, JSON.stringify(pool));
    }
    const result = await analyze({
      pr: resultsPaths,
      outDir,
      notes,
      ...(historyPath ? { history: historyPath } : {}),
    });
    const baselineArm = armHistory(result.analysis, "baseline");
    if (stream && baselineArm.length > 0) {
      // A failed pooling costs the pool one run, not the PR its result.
      await history
        .record({ stream, arch: run.arch, runId: `run:${run.id}`, tests: baselineArm })
        .catch((error: unknown) =>
          log.warn({ err: error, runId: run.id }, "baseline arm not added to the history pool"),
        );
    }
    if (pool && pool.runs === 0) {
      return {
        conclusion: "neutral",
        output: {
          title: `No history for ${stream} (${run.arch}) yet — nothing compared`,
          summary:
            `baseline=history compares with the pooled runs of release stream \`${stream}\` on ${run.arch}, and the pool is empty. ` +
            "Gating runs and the baseline arms of baseline=payload runs fill it; use baseline=payload until then.",
        },
        reportPath: result.paths.html,
      };
    }
    return { conclusion: result.conclusion, output: result.checkRun, reportPath: result.paths.html };
  };
}
