import type { Logger } from "pino";
import { ARCHES } from "@netstress/core/arch/arch.ts";
import { gateVerdict } from "../analysis/gate-verdict.ts";
import { crossArchDifferences, type CrossArchResult } from "../analysis/cross-arch.ts";
import { scanFirstBadPayloads, type FirstBadPayload } from "../analysis/first-bad-payload.ts";
import { formatPercent, formatPValue } from "../analysis/format-statistics.ts";
import type { QuarantineEntry } from "../analysis/quarantine.ts";
import { streamQuarantine } from "../analysis/stream-quarantine.ts";
import { analyzeRun } from "../report/analyze-run.ts";
import { markdownCell } from "../report/markdown-cell.ts";
import type { AnalyzeRunResults, RunAnalysis } from "../runs/analyze-port.ts";
import { armPayload } from "../runs/arm-payload.ts";
import type { PeriodicSubject, RunRecord } from "../runs/run-record.ts";
import { armHistory } from "./arm-history.ts";
import type { HistoryStore, PooledHistory, PooledPayload } from "./history-store.ts";

/**
 * The analysis port for runs of every subject, with the history rule in one place:
 * - baseline=history compares the PR arm with the pool of the run's release stream and arch
 *   (handed to the analysis as read, so the report states the pool's size and age); an empty pool
 *   judges nothing, and the run ends neutral and says so;
 * - a run's baseline arm (the released payload) joins its stream's pool afterwards — a PR run's
 *   only when its arms ran isolated (pods and clusters of their own, ResultSet.armsIsolated): where
 *   they shared a pod or a cluster, the PR's code could have written or sabotaged the baseline's results;
 * - a gate's candidate joins it too, once the gate accepted it, and a periodic's payload always;
 * - a gate's verdict is decided from the analysis (Accepted / Rejected / Inconclusive);
 * - a PR run on a stream is judged with the one quarantine list: the configured entries, the tests
 *   with a first bad payload on the stream ("also failing on … since …: not caused by this PR") and
 *   the tests flaky on each of the stream's last `flakyPayloads` payloads — all reported, none
 *   failing the conclusion;
 * - a periodic's summary names the first bad payloads its payload made visible, and the tests that
 *   failed significantly more often on one arch than on the others on its payload.
 */
export function createRunAnalyzer(options: {
  history: HistoryStore;
  log: Logger;
  /** Tests that never fail a PR's conclusion (configured). */
  quarantine?: readonly QuarantineEntry[];
  /** A test flaky on each of its stream's last this many payloads is quarantined too (0: never). */
  flakyPayloads?: number;
  analyze?: typeof analyzeRun;
}): AnalyzeRunResults {
  const { history, log, analyze = analyzeRun, flakyPayloads = 0 } = options;

  // The scan is computed once per state of a stream's history: PR runs between two periodics share it.
  const scans = new Map<string, { fingerprint: string; firstBad: FirstBadPayload[] }>();

  /** The stream's history per payload and its first bad payloads; empty when it cannot be read (it only informs). */
  async function streamHistory(run: RunRecord, stream: string) {
    try {
      const payloads = await history.readPayloadHistory({ stream, arch: run.arch });
      const key = `${stream}\0${run.arch}`;
      const fingerprint = payloads.map((payload) => `${payload.payload}\0${payload.runs}`).join("\0");
      const cached = scans.get(key);
      if (cached?.fingerprint === fingerprint) return { payloads, firstBad: cached.firstBad };
      const firstBad = scanFirstBadPayloads({ history: payloads }).findings;
      scans.set(key, { fingerprint, firstBad });
      return { payloads, firstBad };
    } catch (error) {
      log.warn({ err: error, runId: run.id, stream }, "the stream's history per payload could not be read");
      return { payloads: [], firstBad: [] };
    }
  }

  return async ({ run, resultsPaths, outDir, notes, adaptive, artifactHref }) => {
    const stream = run.source.releaseStream;
    const pool =
      run.options.baseline === "history" && stream
        ? await history.read({ stream, arch: run.arch })
        : undefined;
    const before = stream && run.subject.kind !== "gate" ? await streamHistory(run, stream) : undefined;
    const quarantine =
      run.subject.kind !== "pr"
        ? []
        : stream && before
          ? streamQuarantine({
              configured: options.quarantine ?? [],
              stream,
              history: before.payloads,
              firstBad: before.firstBad,
              flakyPayloads,
            })
          : (options.quarantine ?? []);
    const result = await analyze({
      pr: resultsPaths,
      outDir,
      notes,
      ...(adaptive ? { adaptive } : {}),
      ...(artifactHref ? { artifactHref } : {}),
      ...(pool && pool.runs > 0
        ? { history: { baseline: pool, source: `of stream ${pool.stream} (${pool.arch})` } }
        : {}),
      ...(quarantine.length ? { quarantine } : {}),
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
    const baselineUntouched =
      run.subject.kind !== "pr" || (run.results.length > 0 && run.results.every((s) => s.armsIsolated));
    const pooledArms = [
      ...(baselineUntouched ? ["baseline" as const] : []),
      ...(joinsPool ? ["pr" as const] : []),
    ];
    if (stream) {
      for (const arm of pooledArms) {
        const tests = armHistory(result.analysis, arm);
        if (tests.length === 0) continue;
        // A failed pooling costs the pool one run, not the run its result.
        const payload = pooledPayload(run, arm);
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
    if (run.subject.kind === "periodic" && stream && before) {
      const after = await streamHistory(run, stream);
      const findings = newFirstBadPayloads(before.firstBad, after.firstBad);
      const sections = [
        ...(findings.length > 0 ? [describeFirstBadPayloads(stream, run, findings)] : []),
        ...(await crossArchSection(run.id, run.subject, stream)),
      ];
      if (sections.length > 0) {
        const output = result.checkRun;
        return {
          conclusion: result.conclusion,
          output: { ...output, summary: [output.summary, ...sections].join("\n\n") },
          ...common,
        };
      }
    }
    return { conclusion: result.conclusion, output: result.checkRun, ...common };
  };

  /** How the periodic's payload fared on the other arches that ran it: tests failing more often on one. */
  async function crossArchSection(
    runId: string,
    subject: PeriodicSubject,
    stream: string,
  ): Promise<string[]> {
    try {
      const histories = await Promise.all(
        ARCHES.map(async (arch) => ({ arch, history: await history.readPayloadHistory({ stream, arch }) })),
      );
      const result = crossArchDifferences({ payload: subject.payload, histories });
      if (result.notJudged) return [];
      return [describeCrossArch(subject, result)];
    } catch (error) {
      log.warn({ err: error, runId, stream }, "cross-arch consistency could not be judged");
      return [];
    }
  }
}

/** First bad payloads the stream's history shows now and did not before (a test, or its payload, is new). */
function newFirstBadPayloads(before: readonly FirstBadPayload[], after: readonly FirstBadPayload[]) {
  const known = new Set(before.map((finding) => `${finding.test}\0${finding.payload}`));
  return after.filter((finding) => !known.has(`${finding.test}\0${finding.payload}`));
}

function describeCrossArch(subject: PeriodicSubject, result: CrossArchResult): string {
  const arches = result.arches.join(", ");
  if (result.findings.length === 0)
    return `**Cross-arch** (${arches}): no test failed significantly more often on one arch on ${subject.release} (false discovery rate 5% over ${result.familySize} test × arch pair(s) that could differ).`;
  const shown = result.findings.slice(0, MAX_LISTED);
  const more = result.findings.length - shown.length;
  return [
    `**Cross-arch** (${arches}): test(s) failing significantly more often on one arch on ${subject.release} (exact test allowing for how much payloads differ on each arch, false discovery rate 5%):`,
    "",
    ...shown.map(
      (finding) =>
        `- ${markdownCell(finding.test)}: ${finding.counts.failures}/${finding.counts.executions} on **${finding.arch}** against ${finding.others.failures}/${finding.others.executions} on the others (q = ${formatPValue(finding.qValue)})`,
    ),
    ...(more > 0 ? [`- … and ${more} more`] : []),
  ].join("\n");
}

/** A periodic's summary lists at most this many new first bad payloads or cross-arch differences. */
const MAX_LISTED = 20;

function describeFirstBadPayloads(
  stream: string,
  run: RunRecord,
  findings: readonly FirstBadPayload[],
): string {
  const rate = ({ executions, failures }: { executions: number; failures: number }) =>
    `${failures}/${executions} (${formatPercent(failures / executions)})`;
  const shown = findings.slice(0, MAX_LISTED);
  const more = findings.length - shown.length;
  return [
    `**First bad payload${findings.length > 1 ? "s" : ""} newly found on ${stream} (${run.arch})** — the earliest payload after which a test's failure rate rose (changepoint scan, false discovery rate 5%):`,
    "",
    ...shown.map(
      (finding) =>
        `- ${markdownCell(finding.test)}: since **${finding.release}**, failed ${rate(finding.after)} from it on against ${rate(finding.before)} before (q = ${formatPValue(finding.falseAlarmRate)})`,
    ),
    ...(more > 0 ? [`- … and ${more} more`] : []),
  ].join("\n");
}

/** A run's arm is pooled once, however often its analysis is repeated. */
function poolRunId(run: RunRecord, arm: "pr" | "baseline"): string {
  return arm === "baseline" ? `run:${run.id}` : `run:${run.id}:${arm}`;
}

/**
 * The payload an arm ran, by the digest the run was resolved to (see armPayload), with the
 * release-controller's name where a stream chose it: history entries of one payload share a key
 * however its tag was written, and a PR tested at its stream's latest joins that payload.
 */
function pooledPayload(run: RunRecord, arm: "pr" | "baseline"): PooledPayload | undefined {
  const pullspec = armPayload(run, arm);
  if (pullspec === undefined) return undefined;
  const release =
    run.subject.kind === "periodic"
      ? run.subject.release
      : arm === "baseline"
        ? run.payloads?.release
        : undefined;
  return { pullspec, ...(release ? { release } : {}) };
}

function poolSummary(pool: PooledHistory): NonNullable<RunRecord["pool"]> {
  return { runs: pool.runs, ...(pool.from ? { from: pool.from } : {}), ...(pool.to ? { to: pool.to } : {}) };
}
