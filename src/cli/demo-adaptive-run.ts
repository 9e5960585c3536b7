import { join } from "node:path";
import { decideBatch, type Decision, type NextBatch } from "../analysis/decide-batch.ts";
import type { DecideState } from "../analysis/decide-state.ts";
import type { AdaptiveSummary } from "../report/adaptive-test-rows.ts";
import { executeRun, type ExecuteRunOptions } from "../runner/execute-run.ts";
import type { ExecutionPlan, PlanCluster } from "@netstress/core/model/execution-plan.ts";
import { readAllResultRecords } from "../runner/read-all-result-records.ts";
import type { Arm, ResultRecord } from "@netstress/core/model/result-record.ts";
import { runAdaptiveLoop } from "../runs/adaptive-loop.ts";
import { batchPlan } from "../runs/batch-plan.ts";
import { isMonitor } from "../runs/is-monitor.ts";
import { listedTests } from "../runs/listed-tests.ts";
import { readyCrossoverClusters } from "../runs/ready-crossover-clusters.ts";
import type { ListedTests } from "../runs/run-record.ts";
import { toDecideRecord } from "../runs/to-decide-record.ts";
import type { DemoClusters } from "./demo-clusters.ts";
import { CROSSOVER_COSTS, EVERY_TEST } from "../runs/first-batch-shape.ts";
import { firstCrossoverBatch } from "./first-crossover-batch.ts";

export type DemoAdaptiveRun =
  | { status: "cancelled" }
  | {
      status: "finished";
      /** Every batch half's results.jsonl, oldest first. */
      results: string[];
      summary: AdaptiveSummary;
    };

/**
 * The demo's adaptive run, crossover by upgrade (its arms run different payloads): each batch
 * claims new clusters of the released payload for the baseline arm and upgrades the ones that ran
 * it to the PR payload for the PR arm (or claims new ones on the PR payload, to confirm a suspect
 * on clusters never upgraded), as `decideBatch` asks, until every test is decided or the
 * budget is spent. The budget is a fixed run's executions of `budgetIterations` per arm; clusters
 * and upgrades are counted in it at the planner's prices. Each batch's decisions are told as it ends.
 */
export async function runDemoAdaptive(options: {
  clusters: DemoClusters;
  plan: ExecutionPlan;
  target: { from: number; to: number };
  budgetIterations: number;
  outDir: string;
  /** Give each cluster back once its PR half ran (else all are kept until the demo gives them back). */
  releaseWhenDone: boolean;
  run: Pick<
    ExecuteRunOptions,
    "parallel" | "seed" | "timeoutMs" | "retries" | "signal" | "env" | "progressStream"
  >;
  write: (text: string) => void;
}): Promise<DemoAdaptiveRun> {
  const { clusters, target, budgetIterations } = options;
  const costsPer = (unit: number) => ({
    cluster: Math.round(CROSSOVER_COSTS.cluster * unit),
    upgrade: Math.round(CROSSOVER_COSTS.upgrade * unit),
  });
  let next: NextBatch | null = firstCrossoverBatch(target, budgetIterations);
  let decision: Decision | undefined;
  let state: DecideState | undefined;
  let listed: ListedTests = [];
  let unit = 1;
  let nextIteration = 0;
  const results: string[] = [];
  const waiting = new Map<string, PlanCluster>();
  const upgrades: NonNullable<AdaptiveSummary["upgrades"]> = [];
  const seen: Record<Arm, Set<string>> = { pr: new Set(), baseline: new Set() };
  const decidedAfter = new Map<string, number>();
  let batches = 0;
  /** What the last batch ran: its records are what the next decision reads. */
  let ran: ResultRecord[] | undefined;
  const ended = await runAdaptiveLoop<
    NextBatch,
    { fresh: PlanCluster[]; onPr: PlanCluster[] },
    "finished" | "cancelled"
  >({
    // The demo does not resume: every batch is planned by the decision before it.
    planned: async () => undefined,
    async decide() {
      if (ran) {
        const records = ran;
        listed = listedTests(listed, records);
        for (const record of records) if (!isMonitor(record.name)) seen[record.arm].add(record.name);
        if (batches === 1) {
          // The budget's unit: executions of one arm an iteration, monitors and retries included.
          unit = records.length / Math.max(1, next!.iterations * next!.clusters.baseline.length);
        }
        const tests = [...seen.baseline].filter((name) => seen.pr.size === 0 || seen.pr.has(name)).sort();
        const decided = decideBatch({
          tests,
          target,
          payloads: "differ",
          costs: costsPer(unit),
          budget: Math.round(2 * budgetIterations * unit),
          held: [...waiting.keys()],
          ...(state ? { state } : {}),
          batches: [records.map(toDecideRecord)],
        });
        const now = decided.decision;
        decision = now;
        state = decided.state;
        next = now.next;
        for (const test of now.tests)
          if (test.decision !== "undecided" && !decidedAfter.has(test.name))
            decidedAfter.set(test.name, batches);
        const count = (kind: string) => now.tests.filter((t) => t.decision === kind).length;
        options.write(
          `  decided: ${count("regression")} regression(s), ${count("clean")} clean, ${count("undecided")} undecided; ` +
            `${now.spent} of a budget of ${now.budget} test executions spent (clusters and upgrades included)\n`,
        );
      }
      // The first batch always runs (firstCrossoverBatch throws when the budget pays for none).
      return next ?? { end: "finished" };
    },
    async ready(batch) {
      batches++;
      // Clusters that waited for a PR half no batch will run are given back.
      for (const id of batch.release) {
        waiting.delete(id);
        await clusters.release(id);
      }
      // New clusters on the PR payload confirm a suspect on clusters never upgraded.
      const freshPr = batch.clusters.pr.length - batch.upgrade.length;
      const { baseline: fresh, pr: onPr } = await readyCrossoverClusters<PlanCluster>({
        fresh: batch.clusters.baseline.length,
        freshPr,
        upgrade: batch.upgrade,
        acquire: (count, arm) => clusters.claim(count, arm),
        upgradeCluster: async (id) => {
          const cluster = waiting.get(id);
          if (!cluster)
            throw new Error(`the decision step asked to upgrade ${id}, which ran no baseline batch`);
          const startedAt = Date.now();
          try {
            return await clusters.upgrade(cluster);
          } finally {
            upgrades.push({ id, minutes: (Date.now() - startedAt) / 60_000 });
          }
        },
        failed: async (id, error) => {
          waiting.delete(id);
          upgrades[upgrades.findIndex((u) => u.id === id)]!.failed = error.message;
          options.write(`  ${id} not upgraded, given back: ${error.message}\n`);
          await clusters.release(id);
        },
      });
      options.write(
        `batch ${batches}: ${fresh.length} new cluster(s) on the released payload (baseline arm), ` +
          `${onPr.length - freshPr} upgraded to the PR payload (PR arm)` +
          (freshPr > 0 ? `, ${freshPr} new on the PR payload (PR arm, never upgraded: confirming)` : "") +
          "; " +
          `${batch.tests[0] === EVERY_TEST ? "every test" : `${batch.tests.length} undecided test(s)`} × ${batch.iterations} iterations on each\n`,
      );
      for (const cluster of [...fresh, ...onPr])
        options.write(
          `  ${cluster.arm.padEnd(8)}  ${cluster.id}  running ${cluster.payload}\n` +
            `            kubectl --kubeconfig ${cluster.kubeconfig} get clusterversion\n`,
        );
      return { fresh, onPr };
    },
    async run(batch, { fresh, onPr }) {
      const limited =
        batch.tests[0] === EVERY_TEST
          ? options.plan
          : batchPlan(
              options.plan,
              {
                shardId: "demo",
                first: 0,
                count: 1,
                tests: batch.tests,
                clusters: 1,
                iterationsPerCluster: 1,
              },
              listed,
            );
      const halves = [
        { arm: "baseline" as const, on: fresh },
        { arm: "pr" as const, on: onPr },
      ].filter((half) => half.on.length > 0);
      // One arm per cluster and batch: each half runs on its own clusters, the halves at once, each
      // with iterations of its own so that no two executions of a test share an iteration number.
      const firsts = halves.map((_, index) =>
        halves.slice(0, index).reduce((first, h) => first + batch.iterations * h.on.length, nextIteration),
      );
      const outcomes = await Promise.all(
        halves.map(async (half, index) => {
          const { outcome, paths } = await executeRun({
            ...options.run,
            plan: {
              ...limited,
              arms: limited.arms.filter((arm) => arm.arm === half.arm),
              clusters: half.on,
            },
            outDir: join(options.outDir, `batch-${batches}-${half.arm}`),
            iterations: batch.iterations * half.on.length,
            firstIteration: firsts[index]!,
            ...(options.run.parallel
              ? { parallel: Math.max(1, Math.ceil(options.run.parallel / halves.length)) }
              : {}),
          });
          return { outcome, results: paths.results };
        }),
      );
      nextIteration += halves.reduce((sum, h) => sum + batch.iterations * h.on.length, 0);
      results.push(...outcomes.map((r) => r.results));
      if (outcomes.some((r) => r.outcome.status === "cancelled")) return { end: "cancelled" };
      for (const cluster of fresh) waiting.set(cluster.id, cluster);
      for (const cluster of onPr) {
        waiting.delete(cluster.id);
        if (options.releaseWhenDone) await clusters.release(cluster.id);
      }
      ran = (await Promise.all(outcomes.map((r) => readAllResultRecords(r.results)))).flat();
      return undefined;
    },
  });
  if (ended === "cancelled") return { status: "cancelled" };
  // The first batch always runs: it decided.
  return { status: "finished", results, summary: summaryOf(decision!) };

  function summaryOf(decision: Decision): AdaptiveSummary {
    return {
      design: "crossover by upgrade",
      batches,
      tests: decision.tests
        .filter((t) => t.name !== EVERY_TEST)
        .map((t) => ({
          name: t.name,
          decision: t.decision,
          reason: t.reason,
          ...(decidedAfter.has(t.name) ? { decidedAfter: decidedAfter.get(t.name)! } : {}),
          executions: t.executions,
          clusters: t.clusters,
          contrasts: t.contrasts,
          meanContrast: t.meanContrast,
        })),
      stopped: decision.stopped,
      spent: decision.spent,
      budget: decision.budget,
      target,
      method: decision.method,
      upgrades,
    };
  }
}
