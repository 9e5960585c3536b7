import type { BinarySandbox } from "../ote/invoke-binary.ts";
import type { StartProcess } from "../ote/start-process.ts";
import { runTests as runTestsDefault, type RunTestsOptions, type RunTestsResult } from "../ote/run-tests.ts";
import { buildSchedule, type Execution } from "./build-schedule.ts";
import type { ClusterChooser, ExecutionCluster } from "./execution-cluster.ts";
import { IsolationScheduler } from "./isolation-scheduler.ts";
import type { PreparedComponent, PreparedPlan } from "./prepare-plan.ts";
import { readDisruption } from "./read-disruption.ts";
import type { Arm, ResultRecord } from "./result-record.ts";
import { RunnerError } from "./runner-error.ts";

/** Set per execution (extraEnv), never taken from the runner's own environment. */
const PER_EXECUTION_VARIABLES = ["NETSTRESS_ARM", "NETSTRESS_ITERATION", "NETSTRESS_ATTEMPT"] as const;

export interface RunProgress {
  done: number;
  total: number;
  /** Executions whose last attempt failed. */
  failed: number;
}

export interface RunPlanOptions {
  prepared: PreparedPlan;
  iterations: number;
  /** First iteration number; a shard of a larger run starts where its share begins. */
  firstIteration?: number;
  parallel: number;
  /** At most this many `[sig-network]` tests at once (origin runs them at half); defaults to `parallel`. */
  networkParallel?: number;
  seed: string;
  timeoutMs: number;
  /** Reruns of a failed test inside the same iteration; a later pass makes it a flake. */
  retries: number;
  signal?: AbortSignal;
  /** Written as `cluster` on every record: the cluster under test these executions ran against. */
  clusterLabel?: string;
  /**
   * The clusters under test, per arm and iteration (see roundRobinClusters): each attempt runs with
   * KUBECONFIG pointing at its cluster's file, and its record names the cluster and its payload.
   */
  clusters?: ClusterChooser;
  /**
   * Reruns of an execution whose cluster was lost while it ran (on another of the arm's clusters);
   * past them the run fails as an infrastructure problem. Default 2.
   */
  clusterRetries?: number;
  env?: NodeJS.ProcessEnv;
  /** Where, and as whom, the test binaries run (see the local executor). */
  sandbox?: BinarySandbox;
  onRecord: (record: ResultRecord) => void | Promise<void>;
  onProgress?: (progress: RunProgress) => void;
  runTests?: (options: RunTestsOptions) => Promise<RunTestsResult>;
  /** How test processes start: Node's spawn unless given (executeRun gives its process spawner). */
  start?: StartProcess;
}

export interface RunOutcome {
  status: "completed" | "cancelled";
  total: number;
  done: number;
  records: number;
  /** Executions whose last attempt failed, blocking or informing. */
  failed: number;
  /** Per arm: executions of blocking tests whose last attempt failed. */
  blockingFailures: Record<Arm, number>;
}

/**
 * Executes a prepared plan: every selected test of every arm, `iterations` times, at most
 * `parallel` at once, in a seeded interleaved order; [Serial], [Disruptive] and fully isolated
 * tests run alone and conflicting ones apart (see IsolationScheduler). One test per process, so a
 * crash or hang costs that test alone. On abort, running tests are killed and their unfinished
 * executions are not recorded: a cancelled run never reports failures it did not observe.
 */
export async function runPlan(options: RunPlanOptions): Promise<RunOutcome> {
  const { prepared, signal, runTests = runTestsDefault } = options;
  const componentsByKey = new Map(prepared.components.map((c) => [`${c.arm}/${c.component}`, c]));
  const schedule = buildSchedule({
    tests: prepared.components.flatMap((c) =>
      c.selected.map((name) => ({
        arm: c.arm,
        component: c.component,
        name,
        isolation: c.isolation.get(name),
      })),
    ),
    iterations: options.iterations,
    firstIteration: options.firstIteration,
    seed: options.seed,
  });
  const progress: RunProgress = { done: 0, total: schedule.length, failed: 0 };
  const blockingFailures: Record<Arm, number> = { pr: 0, baseline: 0 };
  // A snapshot: spreading process.env itself reads every variable from the C environment, per test.
  const baseEnv = { ...(options.env ?? process.env) };
  for (const name of PER_EXECUTION_VARIABLES) delete baseEnv[name];
  // One environment object per component and cluster, so the process spawner encodes it once.
  const envs = new Map<string, NodeJS.ProcessEnv>();
  const envFor = (component: PreparedComponent, cluster: ExecutionCluster | undefined) => {
    const key = `${component.arm}/${component.component}/${cluster?.id ?? ""}`;
    let env = envs.get(key);
    if (!env) {
      env = {
        ...baseEnv,
        ...(cluster ? { KUBECONFIG: cluster.kubeconfig } : {}),
        ...(component.artifactDir ? { EXTENSION_ARTIFACT_DIR: component.artifactDir } : {}),
      };
      envs.set(key, env);
    }
    return env;
  };
  let records = 0;

  const execute = async (execution: Execution): Promise<void> => {
    const component = componentsByKey.get(`${execution.arm}/${execution.component}`)!;
    for (let attempt = 0; attempt <= options.retries; attempt++) {
      if (signal?.aborted) return;
      const record = await runAttempt(component, execution, attempt);
      if (!record) return;
      await options.onRecord(record);
      records += 1;
      if (record.result !== "failed") break;
      if (attempt === options.retries) {
        progress.failed += 1;
        if (record.lifecycle === "blocking") blockingFailures[execution.arm] += 1;
      }
    }
    progress.done += 1;
    options.onProgress?.({ ...progress });
  };

  /** One attempt on its cluster; an attempt cut short by the loss of its cluster runs again on another. */
  const runAttempt = async (
    component: PreparedComponent,
    execution: Execution,
    attempt: number,
  ): Promise<ResultRecord | undefined> => {
    const lostOn: string[] = [];
    for (;;) {
      const cluster = options.clusters?.(execution);
      const record = await runOnCluster(component, execution, attempt, cluster);
      if (!cluster?.lost?.aborted || signal?.aborted) return record;
      lostOn.push(cluster.id);
      if (lostOn.length > (options.clusterRetries ?? 2)) {
        throw new RunnerError(
          `${execution.arm} iteration ${execution.iteration}: its clusters were lost ${lostOn.length} times (${lostOn.join(", ")})`,
        );
      }
    }
  };

  const runOnCluster = async (
    component: PreparedComponent,
    execution: Execution,
    attempt: number,
    cluster: ExecutionCluster | undefined,
  ): Promise<ResultRecord | undefined> => {
    const lost = cluster?.lost;
    const { outcomes, aborted } = await runTests({
      binary: component.executable,
      names: [execution.name],
      lifecycles: component.lifecycles,
      timeoutMs: options.timeoutMs,
      signal: lost ? (signal ? AbortSignal.any([signal, lost]) : lost) : signal,
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      ...(options.start ? { start: options.start } : {}),
      env: envFor(component, cluster),
      extraEnv: {
        NETSTRESS_ARM: execution.arm,
        NETSTRESS_ITERATION: String(execution.iteration),
        NETSTRESS_ATTEMPT: String(attempt),
      },
    });
    const outcome = outcomes[0]!;
    if (aborted && outcome.harnessError) return undefined;
    if (lost?.aborted) return undefined;
    const alone = execution.isolation?.alone;
    const label = cluster?.id ?? options.clusterLabel;
    return {
      ...outcome,
      arm: execution.arm,
      arch: prepared.arch,
      iteration: execution.iteration,
      attempt,
      component: component.component,
      ...(component.source ? { source: component.source } : {}),
      ...(label ? { cluster: label } : {}),
      ...(cluster ? { payload: cluster.payload } : {}),
      ...(alone ? { ranAlone: alone } : {}),
      ...readDisruption({ details: outcome.details }),
    };
  };

  const scheduler = new IsolationScheduler(schedule, {
    parallel: Math.max(1, options.parallel),
    networkParallel: Math.max(1, Math.min(options.networkParallel ?? options.parallel, options.parallel)),
  });
  await new Promise<void>((resolve, reject) => {
    let running = 0;
    let failure: { error: unknown } | undefined;
    const pump = (): void => {
      while (!signal?.aborted && !failure) {
        const execution = scheduler.next();
        if (!execution) break;
        running += 1;
        execute(execution).then(
          () => settle(execution),
          (error: unknown) => {
            failure ??= { error };
            settle(execution);
          },
        );
      }
      if (running > 0) return;
      if (failure) reject(failure.error);
      else if (signal?.aborted || scheduler.exhausted) resolve();
    };
    const settle = (execution: Execution): void => {
      running -= 1;
      scheduler.complete(execution);
      pump();
    };
    pump();
  });

  return {
    status: signal?.aborted ? "cancelled" : "completed",
    total: schedule.length,
    done: progress.done,
    records,
    failed: progress.failed,
    blockingFailures,
  };
}
