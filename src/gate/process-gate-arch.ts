import { writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Arch } from "../arch/arch.ts";
import { lostIterationNotes } from "../farm/lost-iteration-notes.ts";
import { shardId, type ShardExecutor } from "../farm/shard-executor.ts";
import { armHistory } from "../history/arm-history.ts";
import type { HistoryStore } from "../history/history-store.ts";
import { analyzeRun } from "../report/analyze-run.ts";
import type { RunProgress } from "../runner/run-plan.ts";
import type { ResolveGatePlan } from "./gate-plan-resolver.ts";
import { gateRunId } from "./gate-run-id.ts";
import type { GateArch } from "./gate-schemas.ts";
import type { GateStore } from "./gate-store.ts";
import { gateVerdict } from "./gate-verdict.ts";

export interface GateWorkerDeps {
  store: GateStore;
  history: HistoryStore;
  /** The same executor (farms, or this machine) PR runs use. */
  executor: ShardExecutor;
  resolvePlan: ResolveGatePlan;
  analyze?: typeof analyzeRun;
  /** Gate runs live under <dataDir>/gates/<id>/<arch>/. */
  dataDir: string;
  publicUrl: string;
  /** Tests running at once in a shard. */
  parallel: number;
  timeoutMinutes: number;
  testTimeoutMs?: number;
  retries?: number;
  /** Least time between two progress writes. */
  progressIntervalMs?: number;
  /**
   * Aborted when this process stops: the arch's shard stops (farm Jobs keep running), and the arch
   * is left as it is for the next worker to resume.
   */
  shutdown?: AbortSignal;
  log: Logger;
  now?: () => Date;
}

/** Where a gate arch's files live; the report route reads report/report.html from here. */
export function gateArchDir(dataDir: string, gateId: string, arch: Arch): string {
  return join(dataDir, "gates", gateId, arch);
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Runs one arch of a gate through the PR pipeline's stages — plan resolution from the payloads,
 * one shard on the executor, analyzeRun — and turns the analysis into a verdict. The baseline arm
 * (and the candidate, when accepted) joins the stream's history pool. Anything that stops the run
 * ends the arch Inconclusive with the reason: an infrastructure failure never rejects a payload.
 * "interrupted": this process is stopping; the arch is left running for the next worker.
 */
export async function processGateArch(
  deps: GateWorkerDeps,
  input: { gateId: string; arch: Arch },
): Promise<"done" | "interrupted"> {
  const { store, log, now = () => new Date() } = deps;
  const { gateId, arch } = input;
  if (deps.shutdown?.aborted) return "interrupted";
  const found = await store.get(gateId);
  const current = found?.arches.find((a) => a.arch === arch);
  if (!found || !current || current.state === "completed") return "done";
  const { gate } = found;
  const analyze = deps.analyze ?? analyzeRun;
  const dir = gateArchDir(deps.dataDir, gateId, arch);
  let state: GateArch = {
    ...current,
    state: "resolving",
    reasons: [],
    startedAt: current.startedAt ?? now().toISOString(),
  };
  const update = async (change: Partial<GateArch>) => {
    state = { ...state, ...change };
    await store.setArch(gateId, state);
  };
  const inconclusive = (reason: string) =>
    update({
      state: "completed",
      verdict: "Inconclusive",
      reasons: [reason],
      finishedAt: now().toISOString(),
    });
  await update({});

  const arches = await deps.executor.arches();
  if (!arches.includes(arch)) {
    await inconclusive(
      `no ${deps.executor.name} executor runs ${arch} (available: ${arches.join(", ") || "none"})`,
    );
    return "done";
  }
  let plan;
  try {
    plan = await deps.resolvePlan({ gate, arch });
  } catch (error) {
    log.warn({ err: error, gateId, arch }, "gate plan resolution failed");
    await inconclusive(`the payloads could not be resolved for ${arch}: ${message(error)}`);
    return "done";
  }

  await update({ state: "running" });
  const iterations = { first: 0, count: gate.iterations };
  // The deadline counts from the arch's first start: a resumed arch does not get a fresh one.
  const remainingMs = Date.parse(state.startedAt!) + deps.timeoutMinutes * 60_000 - now().getTime();
  const deadline = AbortSignal.timeout(Math.max(0, remainingMs));
  const signal = deps.shutdown ? AbortSignal.any([deadline, deps.shutdown]) : deadline;
  let lastProgress = 0;
  const onProgress = (progress: RunProgress) => {
    const at = now().getTime();
    if (at - lastProgress < (deps.progressIntervalMs ?? 5_000)) return;
    lastProgress = at;
    update({ progress }).catch((error: unknown) =>
      log.warn({ err: error, gateId, arch }, "gate progress update failed"),
    );
  };
  const outcome = await deps.executor.execute({
    shard: {
      runId: gateRunId(gateId),
      id: shardId(arch, iterations),
      arch,
      arms: plan.arms.map((a) => a.arm),
      iterations,
      plan,
      seed: gateId.slice(0, 16),
      ...(gate.capabilities ? { capabilities: gate.capabilities } : {}),
      parallel: deps.parallel,
      testTimeoutMs: deps.testTimeoutMs ?? 15 * 60_000,
      retries: deps.retries ?? 1,
    },
    outDir: join(dir, "shards", shardId(arch, iterations)),
    signal,
    onProgress,
  });
  if (outcome.status === "failed") {
    await inconclusive(`the ${deps.executor.name} executor could not run ${arch}: ${outcome.reason}`);
    return "done";
  }
  if (outcome.status === "cancelled") {
    if (deps.shutdown?.aborted && !deadline.aborted) return "interrupted";
    await inconclusive(`the run took longer than ${deps.timeoutMinutes} minutes`);
    return "done";
  }

  await update({ state: "analyzing" });
  try {
    const outDir = join(dir, "report");
    const hasBaselineArm = plan.arms.some((a) => a.arm === "baseline");
    // Without a baseline arm (the candidate is the stream's latest), the stream's pool is the baseline.
    const pool = hasBaselineArm ? undefined : await deps.history.read({ stream: gate.stream, arch });
    let historyPath: string | undefined;
    if (pool) {
      await mkdir(outDir, { recursive: true });
      historyPath = join(outDir, "history.json");
      await writeFile(historyPath, JSON.stringify(pool));
    }
    const result = await analyze({
      pr: outcome.resultsPath,
      outDir,
      ...(outcome.lost ? { notes: lostIterationNotes(outcome.lost) } : {}),
      ...(historyPath ? { history: historyPath } : {}),
    });
    const { verdict, reasons } = gateVerdict(result.analysis);
    const at = now();
    // The released payload always joins the stream's pool; the candidate only once it is accepted.
    const pooledArms = [
      ...(hasBaselineArm ? (["baseline"] as const) : []),
      ...(verdict === "Accepted" ? (["pr"] as const) : []),
    ];
    for (const arm of pooledArms) {
      const tests = armHistory(result.analysis, arm);
      await deps.history.record({
        stream: gate.stream,
        arch,
        runId: `gate:${gateId}:${arch}:${arm}`,
        at,
        tests,
      });
    }
    await update({
      state: "completed",
      verdict,
      reasons,
      reportUrl: `${deps.publicUrl}/gates/${gateId}/${arch}/report`,
      ...(pool
        ? {
            history: {
              runs: pool.runs,
              ...(pool.from ? { from: pool.from } : {}),
              ...(pool.to ? { to: pool.to } : {}),
            },
          }
        : {}),
      finishedAt: at.toISOString(),
    });
  } catch (error) {
    log.error({ err: error, gateId, arch }, "gate analysis failed");
    await inconclusive(`the results could not be analyzed: ${message(error)}`);
  }
  return "done";
}
