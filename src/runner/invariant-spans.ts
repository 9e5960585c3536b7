import { access, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Execution } from "./build-schedule.ts";

/** What an `[Invariant]` test is told and how it is stopped (the test's side: docs/network-tests.md). */
export interface InvariantSpan {
  /** Created once the iteration's other tests have all finished; absent: it ends on its own. */
  stopFile?: string;
  /** The test creates it once it is watching; the iteration's other tests wait for that. */
  readyFile?: string;
  graceMs: number;
  /** Aborted when the grace after the stop file has passed: SIGTERM, then SIGKILL. */
  deadline: AbortSignal;
}

interface Group {
  invariants: Execution[];
  othersLeft: number;
  started: boolean;
  /** Invariants of the group still starting or running. */
  alive: number;
  stops: { file?: string; controller: AbortController }[];
  readyFiles: string[];
  ready?: Promise<void>;
  graceTimer?: NodeJS.Timeout;
}

const READY_POLL_MS = 50;

/**
 * Gives `[Invariant]` tests the span of their iteration: they start before the other tests of their
 * arm and iteration, which wait until the invariants say they watch; once the last of those tests
 * has finished the invariants are told to wrap up (a stop file, as origin stops its pollers with a
 * ConfigMap), and after a grace SIGTERMed. An iteration of nothing but invariants lets them run for
 * their own default duration.
 */
export class InvariantSpans {
  private readonly groups = new Map<string, Group>();
  private nextFile = 0;

  constructor(
    invariants: readonly Execution[],
    others: readonly Execution[],
    private readonly options: { dir: () => Promise<string>; graceMs: number; readyTimeoutMs: number },
  ) {
    for (const execution of invariants) this.group(execution).invariants.push(execution);
    for (const execution of others) {
      const group = this.groups.get(key(execution));
      if (group) group.othersLeft += 1;
    }
  }

  /** Invariants to start now: those of groups with no other test, at the start of the run. */
  initial(): Execution[] {
    return [...this.groups.values()].flatMap((g) => (g.othersLeft === 0 ? this.take(g) : []));
  }

  /** Invariants to start before `execution` (an ordinary test): its group's, the first time. */
  before(execution: Execution): Execution[] {
    const group = this.groups.get(key(execution));
    return group ? this.take(group) : [];
  }

  /** The span of an invariant the caller is about to start (see `initial` and `before`). */
  async span(invariant: Execution): Promise<InvariantSpan> {
    const group = this.groups.get(key(invariant))!;
    const controller = new AbortController();
    if (group.othersLeft === 0) {
      group.stops.push({ controller });
      return { graceMs: this.options.graceMs, deadline: controller.signal };
    }
    const base = join(await this.options.dir(), String(this.nextFile++));
    group.stops.push({ file: `${base}.stop`, controller });
    group.readyFiles.push(`${base}.ready`);
    return {
      stopFile: `${base}.stop`,
      readyFile: `${base}.ready`,
      graceMs: this.options.graceMs,
      deadline: controller.signal,
    };
  }

  /** The invariant ended, however: its group no longer waits for it to be ready. */
  ended(invariant: Execution): void {
    const group = this.groups.get(key(invariant));
    if (group) group.alive -= 1;
  }

  /**
   * Resolves once every invariant of the test's group watches (its ready file exists), has ended,
   * or `readyTimeoutMs` has passed: only then may the group's other tests start.
   */
  ready(execution: Execution): Promise<void> {
    const group = this.groups.get(key(execution));
    if (!group || group.invariants.length === 0) return Promise.resolve();
    group.ready ??= (async () => {
      const deadline = Date.now() + this.options.readyTimeoutMs;
      while (Date.now() < deadline && group.alive > 0) {
        const present = await Promise.all(
          group.readyFiles.map((file) =>
            access(file).then(
              () => true,
              () => false,
            ),
          ),
        );
        if (group.readyFiles.length === group.invariants.length && present.every(Boolean)) return;
        await sleep(READY_POLL_MS);
      }
    })();
    return group.ready;
  }

  /** An ordinary test finished: the last of its group tells the group's invariants to stop. */
  async finished(execution: Execution): Promise<void> {
    const group = this.groups.get(key(execution));
    if (!group || --group.othersLeft > 0) return;
    await Promise.all(group.stops.flatMap((s) => (s.file ? [writeFile(s.file, "stop\n")] : [])));
    group.graceTimer = setTimeout(() => {
      for (const stop of group.stops) stop.controller.abort("the invariant did not wrap up within its grace");
    }, this.options.graceMs);
  }

  /** Stops every invariant at once (the run failed or was cancelled). */
  abortAll(reason: string): void {
    for (const group of this.groups.values()) {
      clearTimeout(group.graceTimer);
      for (const stop of group.stops) stop.controller.abort(reason);
    }
  }

  /** Clears the grace timers (every invariant has ended). */
  close(): void {
    for (const group of this.groups.values()) clearTimeout(group.graceTimer);
  }

  private take(group: Group): Execution[] {
    if (group.started) return [];
    group.started = true;
    group.alive = group.invariants.length;
    return group.invariants;
  }

  private group(execution: Execution): Group {
    let group = this.groups.get(key(execution));
    if (!group) {
      group = { invariants: [], othersLeft: 0, started: false, alive: 0, stops: [], readyFiles: [] };
      this.groups.set(key(execution), group);
    }
    return group;
  }
}

const key = (execution: Execution) => `${execution.arm}/${execution.iteration}`;
