import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { withUpgradeTargets } from "../runner/with-upgrade-targets.ts";
import { armPayload } from "../runs/arm-payload.ts";
import type { RunRecord } from "../runs/run-record.ts";
import { shardId, type Shard } from "../runs/shard-executor.ts";

/** The shard of a run's iterations `first … first + count - 1` that runs `plan` (the run's, or an adaptive batch's). */
export function shardOfRun(input: {
  run: RunRecord;
  iterations: { first: number; count: number };
  plan: ExecutionPlan;
  testTimeoutMs: number;
  retries: number;
}): Shard {
  const { run, iterations, plan } = input;
  return {
    runId: run.id,
    id: shardId(run.arch, iterations),
    arch: run.arch,
    arms: plan.arms.map((a) => a.arm),
    iterations,
    plan: withSelection(plan, run),
    seed: run.id.slice(0, 16),
    ...(run.source.capabilities?.length ? { capabilities: run.source.capabilities } : {}),
    ...(run.options.focus ? { focus: run.options.focus } : {}),
    parallel: run.source.parallel,
    ...(run.source.networkParallel ? { networkParallel: run.source.networkParallel } : {}),
    testTimeoutMs: input.testTimeoutMs,
    retries: input.retries,
  };
}

/**
 * The run's plan with the tests it selects (its suite, whether [Disruptive] tests may run) and, for
 * an upgrade run, each arm's upgrade target: the payload its clusters would otherwise run.
 */
function withSelection(plan: ExecutionPlan, run: RunRecord): ExecutionPlan {
  const { options } = run;
  const upgrade = options.upgradeFrom !== undefined;
  if (!options.suite && !options.includeDisruptive && !upgrade) return plan;
  const selected: ExecutionPlan = {
    ...plan,
    selection: {
      ...plan.selection,
      ...(options.suite ? { suite: options.suite } : {}),
      ...(options.includeDisruptive ? { includeDisruptive: true } : {}),
    },
  };
  return upgrade ? withUpgradeTargets(selected, (arm) => armPayload(run, arm)) : selected;
}
