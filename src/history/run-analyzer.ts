import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import { gateVerdict } from "../analysis/gate-verdict.ts";
import type { QuarantineEntry } from "../analysis/quarantine.ts";
import { analyzeRun } from "../report/analyze-run.ts";
import type { AnalyzeRunResults, RunAnalysis } from "../runs/analyze-port.ts";
import type { RunRecord } from "../runs/run-record.ts";
import { armHistory } from "./arm-history.ts";
import type { HistoryStore, PooledHistory, PooledPayload } from "./history-store.ts";

/**
 * The analysis port for runs of every subject, with the history rule in one place:
 * - baseline=history compares the PR arm with the pool of the run's release stream and arch
 *   (written beside the report as history.json, so the report states the pool's size and age); an
 *   empty pool judges nothing, and the run ends neutral and says so;
 * - a run's baseline arm (the released payload) always joins its stream's pool afterwards;
 * - a gate's candidate joins it too, once the gate accepted it, and a periodic's payload always;
 * - a gate's verdict is decided from the analysis (Accepted / Rejected / Inconclusive).
 */
export function createRunAnalyzer(options: {
  history: HistoryStore;
  log: Logger;
  /** Tests that never fail a PR's conclusion. */
  quarantine?: readonly QuarantineEntry[];
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
      ...(run.subject.kind === "pr" && options.quarantine?.length ? { quarantine: options.quarantine } : {}),
    });
    const emptyPool = pool !== undefined && pool.runs === 0;
    const decision =
      run.subject.kind !== "gate"
        ? undefined
        : emptyPool
          ? {
              verdict: "Inconclusive" as const,
              reasons: [`the history pool of ${stream} (${run.arch}) is empty: nothing to compare with`],
            }
          : gateVerdict(result.analysis);
    // A periodic's "pr" arm is the released payload itself; an accepted gate candidate joins too.
    const joinsPool = decision?.verdict === "Accepted" || run.subject.kind === "periodic";
    const pooledArms = ["baseline" as const, ...(joinsPool ? ["pr" as const] : [])];
    if (stream) {
      for (const arm of pooledArms) {
        const tests = armHistory(result.analysis, arm);
        if (tests.length === 0) continue;
        // A failed pooling costs the pool one run, not the run its result.
        const payload = armPayload(run, arm);
        await history
          .record({
            stream,
            arch: run.arch,
            runId: poolRunId(run, arm),
            tests,
            ...(payload ? { payload } : {}),
          })
          .catch((error: unknown) =>
            log.warn({ err: error, runId: run.id, arm }, "arm not added to the history pool"),
          );
      }
    }
    const common: Pick<RunAnalysis, "reportPath" | "decision" | "pool"> = {
      reportPath: result.paths.html,
      ...(decision ? { decision } : {}),
      ...(pool ? { pool: poolSummary(pool) } : {}),
    };
    if (emptyPool) {
      return {
        conclusion: "neutral",
        output: {
          title: `No history for ${stream} (${run.arch}) yet — nothing compared`,
          summary:
            `baseline=history compares with the pooled runs of release stream \`${stream}\` on ${run.arch}, and the pool is empty. ` +
            "Gating runs and the baseline arms of baseline=payload runs fill it; use baseline=payload until then.",
        },
        ...common,
      };
    }
    return { conclusion: result.conclusion, output: result.checkRun, ...common };
  };
}

/** A run's arm is pooled once, however often its analysis is repeated. */
function poolRunId(run: RunRecord, arm: "pr" | "baseline"): string {
  return arm === "baseline" ? `run:${run.id}` : `run:${run.id}:${arm}`;
}

/**
 * The payload an arm ran, as far as the record knows: a periodic's payload and release, a gate's
 * candidate and baseline, a PR's configured payload (its baseline arm). A PR tested at its stream's
 * latest payload does not record which one, so its baseline arm joins the pool as a run of its own.
 */
function armPayload(run: RunRecord, arm: "pr" | "baseline"): PooledPayload | undefined {
  const { subject } = run;
  if (subject.kind === "periodic") return { pullspec: subject.payload, release: subject.release };
  if (subject.kind === "gate") return { pullspec: arm === "pr" ? subject.payload : subject.baselinePayload };
  return run.source.payload ? { pullspec: run.source.payload } : undefined;
}

function poolSummary(pool: PooledHistory): NonNullable<RunRecord["pool"]> {
  return { runs: pool.runs, ...(pool.from ? { from: pool.from } : {}), ...(pool.to ? { to: pool.to } : {}) };
}
