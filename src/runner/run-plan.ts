import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BinarySandbox } from "../ote/binary-sandbox.ts";
import type { StartProcess } from "../ote/start-process.ts";
import { formatOteTimestamp } from "@netstress/core/model/format-ote-timestamp.ts";
import {
  runTests as runTestsDefault,
  type RunTestsOptions,
  type RunTestsResult,
  type TestOutcome,
} from "../ote/run-tests.ts";
import { buildSchedule, type Execution } from "./build-schedule.ts";
import type { ClusterChooser, ExecutionCluster } from "./execution-cluster.ts";
import { InvariantSpans, type InvariantSpan } from "./invariant-spans.ts";
import { IsolationScheduler } from "./isolation-scheduler.ts";
import type { PreparedComponent, PreparedPlan } from "./prepare-plan.ts";
import { readDisruption } from "./read-disruption.ts";
import type { Arm, ResultRecord } from "@netstress/core/model/result-record.ts";
import { RunnerError } from "./runner-error.ts";

/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Set by the runner (per execution, or per arm from the plan), never taken from its own
 * environment: an arm without an upgrade target must not upgrade to another arm's.
 */
const RUNNER_VARIABLES = [
  "NETSTRESS_ARM",
  "NETSTRESS_ITERATION",
  "NETSTRESS_ATTEMPT",
  "NETSTRESS_UPGRADE_TARGET",
] as const;

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
  /**
   * After a test is interrupted (SIGINT at its timeout, SIGTERM when the run is cancelled), how long
   * its cleanups may take before SIGABRT; see invokeBinary. Default 60 s, as origin.
   */
  interruptGraceMs?: number;
  /** A test whose spec gives `resources.timeout` gets that timeout instead of `timeoutMs`. */
  useTimeoutHints?: boolean;
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
  /** Where the stop files of `[Invariant]` tests go; a temporary directory unless given. */
  invariantDir?: string;
  /** How long an `[Invariant]` test has to report after its stop file before SIGTERM. Default 30 s. */
  invariantGraceMs?: number;
  /** How long an iteration's other tests wait for its `[Invariant]` tests to say they watch. Default 120 s. */
  invariantReadyMs?: number;
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
 * crash or hang costs that test alone. On abort, running tests are interrupted and their unfinished
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
        durationMs: c.durationHints.get(name),
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
  for (const name of RUNNER_VARIABLES) delete baseEnv[name];
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
        ...(component.upgradeTarget ? { NETSTRESS_UPGRADE_TARGET: component.upgradeTarget } : {}),
      };
      envs.set(key, env);
    }
    return env;
  };
  let records = 0;
  /** Clusters an [Upgrade] test has run on (by id), and which: they no longer run the payload it upgrades from. */
  const upgradedBy = new Map<string, Execution>();

  /** `span`: an [Invariant] test, run once (a rerun would watch another stretch of time). */
  const execute = async (execution: Execution, span?: InvariantSpan): Promise<void> => {
    const component = componentsByKey.get(`${execution.arm}/${execution.component}`)!;
    // A rerun of an upgrade would start from the upgraded cluster.
    const retries = span || execution.isolation?.upgrade ? 0 : options.retries;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (signal?.aborted) return;
      const record = await runAttempt(component, execution, attempt, span);
      if (!record) return;
      await options.onRecord(record);
      records += 1;
      if (record.result !== "failed") break;
      if (attempt === retries) {
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
    span: InvariantSpan | undefined,
  ): Promise<ResultRecord | undefined> => {
    const lostOn: string[] = [];
    for (;;) {
      const cluster = options.clusters?.(execution);
      const record = await runOnCluster(component, execution, attempt, cluster, span);
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
    span: InvariantSpan | undefined,
  ): Promise<ResultRecord | undefined> => {
    const upgradeKey = execution.isolation?.upgrade ? (cluster?.id ?? options.clusterLabel ?? "") : undefined;
    const upgrader = upgradeKey === undefined ? undefined : upgradedBy.get(upgradeKey);
    if (upgrader) {
      const skipped = alreadyUpgraded(component, execution, upgrader);
      return toRecord(component, execution, attempt, cluster, skipped);
    }
    if (upgradeKey !== undefined) upgradedBy.set(upgradeKey, execution);
    const lost = cluster?.lost;
    const stops = [signal, lost, span?.deadline].filter((s) => s !== undefined);
    const { outcomes, aborted } = await runTests({
      binary: component.executable,
      names: [execution.name],
      lifecycles: component.lifecycles,
      // An invariant told when to stop has no deadline of its own before then: its span is the iteration's.
      timeoutMs: span?.stopFile
        ? MAX_TIMER_MS
        : ((options.useTimeoutHints ? component.timeoutHints.get(execution.name) : undefined) ??
          options.timeoutMs),
      ...(options.interruptGraceMs !== undefined ? { interruptGraceMs: options.interruptGraceMs } : {}),
      signal: stops.length > 1 ? AbortSignal.any(stops) : stops[0],
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      ...(options.start ? { start: options.start } : {}),
      env: envFor(component, cluster),
      extraEnv: {
        NETSTRESS_ARM: execution.arm,
        NETSTRESS_ITERATION: String(execution.iteration),
        NETSTRESS_ATTEMPT: String(attempt),
        ...(span?.stopFile
          ? {
              NETSTRESS_INVARIANT_STOP_FILE: span.stopFile,
              ...(span.readyFile ? { NETSTRESS_INVARIANT_READY_FILE: span.readyFile } : {}),
              NETSTRESS_INVARIANT_GRACE_SECONDS: String(span.graceMs / 1000),
            }
          : {}),
      },
    });
    const outcome = outcomes[0]!;
    // Cut short by the run's end or its cluster's loss, whatever the binary then said is no
    // observation of the test: a Ginkgo binary reports "Interrupted by User" as a failure.
    if (aborted && (signal?.aborted || lost?.aborted)) return undefined;
    // Only an invariant's own deadline is left to have cut it short.
    if (span && aborted && outcome.harnessError) {
      outcome.error = `invariant test did not report within its ${span.graceMs / 1000} s grace after the iteration's other tests finished; it was stopped (${outcome.error})`;
    }
    if (lost?.aborted) return undefined;
    // A test that skipped itself (nothing to upgrade to) left the cluster as it was.
    if (upgradeKey !== undefined && outcome.result === "skipped") upgradedBy.delete(upgradeKey);
    return toRecord(component, execution, attempt, cluster, outcome);
  };

  const toRecord = (
    component: PreparedComponent,
    execution: Execution,
    attempt: number,
    cluster: ExecutionCluster | undefined,
    outcome: TestOutcome,
  ): ResultRecord => {
    // Object.assign, and fields assigned rather than spread in: one record per test, and on Node 20
    // a spread of the binary's parsed result costs several microseconds, more than the rest here.
    const record: ResultRecord = Object.assign({}, outcome, {
      arm: execution.arm,
      arch: prepared.arch,
      iteration: execution.iteration,
      attempt,
      component: component.component,
    });
    const facts = component.specFacts.get(execution.name);
    if (facts) Object.assign(record, facts);
    if (component.source) record.source = component.source;
    const label = cluster?.id ?? options.clusterLabel;
    if (label) record.cluster = label;
    if (cluster) record.payload = cluster.payload;
    if (execution.isolation?.alone) record.ranAlone = execution.isolation.alone;
    if (outcome.details !== undefined) Object.assign(record, readDisruption({ details: outcome.details }));
    return record;
  };

  const invariants = schedule.filter((e) => e.isolation?.invariant);
  const others = schedule.filter((e) => !e.isolation?.invariant);
  const scheduler = new IsolationScheduler(others, {
    parallel: Math.max(1, options.parallel),
    networkParallel: Math.max(1, Math.min(options.networkParallel ?? options.parallel, options.parallel)),
  });
  let createdDir: string | undefined;
  const spans = new InvariantSpans(invariants, others, {
    graceMs: options.invariantGraceMs ?? 30_000,
    readyTimeoutMs: options.invariantReadyMs ?? 120_000,
    dir: async () => {
      if (options.invariantDir) return options.invariantDir;
      createdDir ??= await mkdtemp(join(tmpdir(), "netstress-invariants-"));
      // Readable by binaries that run as another user (the local executor's sandbox).
      await chmod(createdDir, 0o755);
      return createdDir;
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let running = 0;
      let invariantsRunning = 0;
      let failure: { error: unknown } | undefined;
      const fail = (error: unknown): void => {
        failure ??= { error };
        spans.abortAll("the run failed");
      };
      const startInvariant = (invariant: Execution): void => {
        invariantsRunning += 1;
        spans
          .span(invariant)
          .then((span) => execute(invariant, span))
          .catch(fail)
          .finally(() => {
            invariantsRunning -= 1;
            spans.ended(invariant);
            pump();
          });
      };
      const pump = (): void => {
        while (!signal?.aborted && !failure) {
          const execution = scheduler.next();
          if (!execution) break;
          for (const invariant of spans.before(execution)) startInvariant(invariant);
          running += 1;
          spans
            .ready(execution)
            .then(() => execute(execution))
            .then(() => spans.finished(execution))
            .catch(fail)
            .finally(() => {
              running -= 1;
              scheduler.complete(execution);
              pump();
            });
        }
        if (running > 0 || invariantsRunning > 0) return;
        if (failure) reject(failure.error);
        else if (signal?.aborted || scheduler.exhausted) resolve();
      };
      signal?.addEventListener("abort", () => spans.abortAll("the run was cancelled"), { once: true });
      for (const invariant of spans.initial()) startInvariant(invariant);
      pump();
    });
  } finally {
    spans.close();
    if (createdDir) await rm(createdDir, { recursive: true, force: true });
  }

  return {
    status: signal?.aborted ? "cancelled" : "completed",
    total: schedule.length,
    done: progress.done,
    records,
    failed: progress.failed,
    blockingFailures,
  };
}

/**
 * An [Upgrade] test on a cluster an earlier one upgraded: it would start from the target, not from
 * the payload it upgrades from, so it is recorded as skipped (never as a pass), saying why.
 */
function alreadyUpgraded(
  component: PreparedComponent,
  execution: Execution,
  upgrader: Execution,
): TestOutcome {
  const now = formatOteTimestamp(new Date());
  const by =
    upgrader.name === execution.name
      ? `this test upgraded it in iteration ${upgrader.iteration}`
      : `"${upgrader.name}" upgraded it in iteration ${upgrader.iteration}`;
  return {
    name: execution.name,
    lifecycle: component.lifecycles.get(execution.name) ?? "blocking",
    duration: 0,
    startTime: now,
    endTime: now,
    result: "skipped",
    output: `skipped: the cluster under test runs the upgrade target already (${by}); an upgrade test runs once per cluster in a run`,
  };
}
