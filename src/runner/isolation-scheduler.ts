import type { Execution } from "./build-schedule.ts";

/** At most this many waiting executions are examined per dispatch, so a blocked queue costs O(1). */
const MAX_SCAN = 256;

/**
 * Decides which execution may start next, as openshift-tests does: executions run in schedule
 * order, at most `parallel` at once and at most `networkParallel` `[sig-network]` ones; tests
 * sharing a conflict never overlap, nor do two copies of a `[Serial:Self]` test (other arm, other
 * iteration); a test applying a taint runs only beside tests tolerating it
 * (origin checks only what starts after it; here what already runs must tolerate it too).
 * A test that must run alone ([Serial], [Disruptive], conflict "*") waits until nothing runs, and
 * nothing starts beside it — whichever arm. Within an iteration the ones that run alone come after
 * the parallel ones, as origin runs serial tests after the parallel suite; iterations without
 * any flow into each other with no barrier.
 */
export class IsolationScheduler {
  private readonly phases: { alone: boolean; executions: Execution[] }[] = [];
  private phase = 0;
  private head = 0;
  private skipped: Execution[] = [];
  private running = 0;
  private runningNetwork = 0;
  private readonly runningConflicts = new Map<string, number>();
  private readonly activeTaints = new Map<string, number>();
  /** The `[Serial:Self]` tests running: a copy of one waits. */
  private readonly runningSelves = new Set<string>();
  /** At most `parallel` entries: what a tainting test must find tolerant before it starts. */
  private readonly runningExecutions = new Set<Execution>();

  constructor(
    schedule: readonly Execution[],
    private readonly limits: { parallel: number; networkParallel: number },
  ) {
    let iteration: number | undefined;
    let parallel: Execution[] = [];
    let alone: Execution[] = [];
    const flush = () => {
      if (parallel.length > 0) {
        const last = this.phases.at(-1);
        if (last && !last.alone) last.executions.push(...parallel);
        else this.phases.push({ alone: false, executions: parallel });
      }
      if (alone.length > 0) this.phases.push({ alone: true, executions: alone });
      parallel = [];
      alone = [];
    };
    for (const execution of schedule) {
      if (execution.iteration !== iteration) {
        flush();
        iteration = execution.iteration;
      }
      (execution.isolation?.alone ? alone : parallel).push(execution);
    }
    flush();
  }

  /** True when every execution has been handed out. */
  get exhausted(): boolean {
    return this.phase >= this.phases.length;
  }

  /** The next execution allowed to start now, marked running; undefined when none may start yet. */
  next(): Execution | undefined {
    while (!this.exhausted) {
      const current = this.phases[this.phase]!;
      if (this.head >= current.executions.length && this.skipped.length === 0) {
        if (this.running > 0) return undefined; // the next phase starts on an empty cluster
        this.phase += 1;
        this.head = 0;
        continue;
      }
      if (current.alone) {
        if (this.running > 0) return undefined;
        return this.start(current.executions[this.head++]!);
      }
      if (this.running >= this.limits.parallel) return undefined;
      return this.nextParallel(current.executions);
    }
    return undefined;
  }

  /** Releases what a finished execution held. */
  complete(execution: Execution): void {
    this.running -= 1;
    this.runningExecutions.delete(execution);
    const isolation = execution.isolation;
    if (!isolation) return;
    if (isolation.network) this.runningNetwork -= 1;
    if (isolation.serialSelf !== undefined) this.runningSelves.delete(isolation.serialSelf);
    for (const conflict of isolation.conflicts) release(this.runningConflicts, conflict);
    for (const taint of isolation.taints) release(this.activeTaints, taint);
  }

  private nextParallel(executions: Execution[]): Execution | undefined {
    let scanned = 0;
    for (let i = 0; i < this.skipped.length && scanned < MAX_SCAN; i++, scanned++) {
      const candidate = this.skipped[i]!;
      if (this.canStart(candidate)) {
        this.skipped.splice(i, 1);
        return this.start(candidate);
      }
    }
    while (this.head < executions.length && scanned < MAX_SCAN) {
      const candidate = executions[this.head++]!;
      if (this.canStart(candidate)) return this.start(candidate);
      this.skipped.push(candidate);
      scanned += 1;
    }
    return undefined;
  }

  private canStart(execution: Execution): boolean {
    const isolation = execution.isolation;
    if (!isolation) return this.activeTaints.size === 0;
    if (isolation.network && this.runningNetwork >= this.limits.networkParallel) return false;
    if (isolation.conflicts.some((c) => this.runningConflicts.has(c))) return false;
    if (isolation.serialSelf !== undefined && this.runningSelves.has(isolation.serialSelf)) return false;
    for (const taint of this.activeTaints.keys()) if (!isolation.tolerations.includes(taint)) return false;
    // A taint changes the cluster under whatever runs: only beside tests that tolerate it.
    for (const taint of isolation.taints) {
      for (const other of this.runningExecutions) {
        if (!other.isolation?.tolerations.includes(taint)) return false;
      }
    }
    return true;
  }

  private start(execution: Execution): Execution {
    this.running += 1;
    this.runningExecutions.add(execution);
    const isolation = execution.isolation;
    if (isolation) {
      if (isolation.network) this.runningNetwork += 1;
      if (isolation.serialSelf !== undefined) this.runningSelves.add(isolation.serialSelf);
      for (const conflict of isolation.conflicts) hold(this.runningConflicts, conflict);
      for (const taint of isolation.taints) hold(this.activeTaints, taint);
    }
    return execution;
  }
}

function hold(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
