import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Lifecycle } from "@netstress/core/model/ote-result-fields.ts";
import type { Arm, BinarySource, ResultRecord } from "@netstress/core/model/result-record.ts";
import type { DisruptionSample } from "./disruption-types.ts";
import { OUTCOME } from "./iteration-outcome.ts";
import type { AggregatedRun, AggregatedTest, ArmAggregate, ArmClusters, FirstFailure } from "./types.ts";

/** Which input a record was read from: the PR results or a separately given baseline. */
export type InputRole = "pr" | "baseline";

const FAILURE_MESSAGE_LIMIT = 2_000;
/** Iteration indexes beyond this are refused: memory is per iteration, and no stress run has more. */
export const MAX_ITERATION = 10_000;

interface Accumulator {
  component: string;
  lifecycle: Lifecycle;
  /** The spec's originalName, when its records carry one. */
  originalName?: string;
  /** The spec's labels and tags, as its records carry them. */
  labels?: string[];
  tags?: Record<string, string>;
  /** Outcome bits per iteration; a plain array of small integers is cheaper to grow than a typed one. */
  outcomes: number[];
  /** Bit i set when attempt i of that iteration was seen (attempts 0..29, small-integer range); duplicates are dropped. */
  attemptsSeen: number[];
  /** Iteration:attempt keys seen for attempts too large for the bit set. */
  largeAttemptsSeen?: Set<string>;
  executions: number;
  totalDurationMs: number;
  source?: BinarySource;
  firstFailure?: FirstFailure;
  /** Per iteration, the disruption of its lowest attempt that reported any. */
  disruption?: Map<number, DisruptionSample>;
}

type Group = Map<string, Accumulator>;

/** Where one group's iterations ran: the first label seen per iteration. */
interface Layout {
  labelOfIteration: (string | undefined)[];
  unlabelled: number;
  conflicting: number;
}

const newLayout = (): Layout => ({ labelOfIteration: [], unlabelled: 0, conflicting: 0 });

function noteCluster(layout: Layout, iteration: number, cluster: string | undefined): void {
  if (cluster === undefined) {
    layout.unlabelled++;
    return;
  }
  const seen = layout.labelOfIteration[iteration];
  if (seen === undefined) {
    while (layout.labelOfIteration.length < iteration) layout.labelOfIteration.push(undefined);
    layout.labelOfIteration[iteration] = cluster;
  } else if (seen !== cluster) layout.conflicting++;
}

function toArmClusters(layout: Layout): ArmClusters {
  const index = new Map<string, number>();
  const ofIteration = Array.from(layout.labelOfIteration, (label) => {
    if (label === undefined) return -1;
    let position = index.get(label);
    if (position === undefined) {
      position = index.size;
      index.set(label, position);
    }
    return position;
  });
  return {
    names: [...index.keys()],
    ofIteration,
    unlabelled: layout.unlabelled,
    conflicting: layout.conflicting,
  };
}

const ATTEMPT_BITS = 30;

function grow(accumulator: Accumulator, iteration: number): void {
  while (accumulator.outcomes.length <= iteration) {
    accumulator.outcomes.push(0);
    accumulator.attemptsSeen.push(0);
  }
}

/** Returns false when this iteration/attempt was already folded. */
function markAttempt(accumulator: Accumulator, iteration: number, attempt: number): boolean {
  if (attempt < ATTEMPT_BITS) {
    const bit = 1 << attempt;
    const seen = accumulator.attemptsSeen[iteration]!;
    if ((seen & bit) !== 0) return false;
    accumulator.attemptsSeen[iteration] = seen | bit;
    return true;
  }
  const key = `${iteration}:${attempt}`;
  accumulator.largeAttemptsSeen ??= new Set();
  if (accumulator.largeAttemptsSeen.has(key)) return false;
  accumulator.largeAttemptsSeen.add(key);
  return true;
}

function toArmAggregate(accumulator: Accumulator): ArmAggregate {
  let passes = 0;
  let failures = 0;
  let flakes = 0;
  let skips = 0;
  for (const bits of accumulator.outcomes) {
    if ((bits & OUTCOME.FAILED) !== 0) {
      if ((bits & OUTCOME.PASSED) !== 0) flakes++;
      else failures++;
    } else if ((bits & OUTCOME.PASSED) !== 0) passes++;
    else if ((bits & OUTCOME.SKIPPED) !== 0) skips++;
  }
  const { outcomes } = accumulator;
  while (outcomes.length > 0 && outcomes.at(-1) === 0) outcomes.pop();
  const aggregate: ArmAggregate = {
    runs: passes + failures + flakes,
    passes,
    failures,
    flakes,
    skips,
    outcomes,
    executions: accumulator.executions,
    totalDurationMs: accumulator.totalDurationMs,
  };
  if (accumulator.source) aggregate.source = accumulator.source;
  if (accumulator.firstFailure) aggregate.firstFailure = accumulator.firstFailure;
  if (accumulator.disruption)
    aggregate.disruption = [...accumulator.disruption.values()].sort((a, b) => a.iteration - b.iteration);
  return aggregate;
}

function countIterations(group: Group): number {
  const seen: number[] = [];
  for (const accumulator of group.values()) {
    accumulator.outcomes.forEach((bits, iteration) => {
      if (bits !== 0) seen[iteration] = 1;
    });
  }
  return seen.reduce((count) => count + 1, 0);
}

/**
 * Folds result records one at a time into per-test, per-arm iteration counts; memory grows with
 * tests × iterations (a small integer each), never with records or output size.
 *
 * Records are grouped by the input they came from and by their own `arm`, and the arms are chosen
 * at the end: the PR arm is the PR input's `pr` records; the baseline arm is the baseline input's
 * `baseline` records (or all of them when it has only `pr` ones, as a single-arm run of the released
 * payload writes), or — without a baseline input — the PR input's own `baseline` records, which is
 * how the runner writes both arms into one results.jsonl.
 */
export function createResultsAggregator() {
  // Four fixed groups, indexed without building a key string per record.
  const groups: Record<InputRole, Record<Arm, Group>> = {
    pr: { pr: new Map(), baseline: new Map() },
    baseline: { pr: new Map(), baseline: new Map() },
  };
  const layouts: Record<InputRole, Record<Arm, Layout>> = {
    pr: { pr: newLayout(), baseline: newLayout() },
    baseline: { pr: newLayout(), baseline: newLayout() },
  };
  const arches = new Set<Arch>();
  let records = 0;
  let duplicates = 0;
  let baselineInputSeen = false;

  function add(record: ResultRecord, role: InputRole = "pr"): void {
    if (record.iteration > MAX_ITERATION) {
      throw new RangeError(`iteration ${record.iteration} is beyond ${MAX_ITERATION}`);
    }
    if (role === "baseline") baselineInputSeen = true;
    const group = groups[role][record.arm];
    let accumulator = group.get(record.name);
    if (!accumulator) {
      accumulator = {
        component: record.component,
        lifecycle: record.lifecycle,
        outcomes: [],
        attemptsSeen: [],
        executions: 0,
        totalDurationMs: 0,
      };
      group.set(record.name, accumulator);
    }
    if (record.originalName) accumulator.originalName = record.originalName;
    if (record.labels) accumulator.labels = record.labels;
    if (record.tags) accumulator.tags = record.tags;
    grow(accumulator, record.iteration);
    if (!markAttempt(accumulator, record.iteration, record.attempt)) {
      duplicates++;
      return;
    }
    records++;
    noteCluster(layouts[role][record.arm], record.iteration, record.cluster);
    arches.add(record.arch);
    accumulator.executions++;
    accumulator.totalDurationMs += record.duration;
    if (record.source) accumulator.source = record.source;
    const bit =
      record.result === "passed"
        ? OUTCOME.PASSED
        : record.result === "failed"
          ? OUTCOME.FAILED
          : OUTCOME.SKIPPED;
    accumulator.outcomes[record.iteration] = accumulator.outcomes[record.iteration]! | bit;
    if (record.disruption) noteDisruption(accumulator, record);
    if (bit === OUTCOME.FAILED && isEarlier(record, accumulator.firstFailure)) {
      const message = (record.error ?? "").trim() || record.output.slice(-FAILURE_MESSAGE_LIMIT).trim();
      accumulator.firstFailure = {
        iteration: record.iteration,
        attempt: record.attempt,
        message: message.slice(0, FAILURE_MESSAGE_LIMIT),
        ...(record.harnessError ? { harnessError: record.harnessError } : {}),
      };
    }
  }

  function pickBaseline(): { group: Group; layout: Layout } {
    if (!baselineInputSeen) return { group: groups.pr.baseline, layout: layouts.pr.baseline };
    return groups.baseline.baseline.size > 0
      ? { group: groups.baseline.baseline, layout: layouts.baseline.baseline }
      : { group: groups.baseline.pr, layout: layouts.baseline.pr };
  }

  function finish(): AggregatedRun {
    const pr = groups.pr.pr;
    const { group: baseline, layout: baselineLayout } = pickBaseline();
    const baselineNameOf = renamesAcross(pr, baseline);
    const joined = new Set(baselineNameOf.values());
    const tests: AggregatedTest[] = [];
    const push = (
      name: string,
      prAccumulator?: Accumulator,
      baselineAccumulator?: Accumulator,
      baselineName?: string,
    ) => {
      // The PR arm's binary describes the test as the PR ships it.
      const describing = (prAccumulator ?? baselineAccumulator)!;
      tests.push({
        name,
        component: describing.component,
        lifecycle: describing.lifecycle,
        ...(describing.originalName ? { originalName: describing.originalName } : {}),
        ...(describing.labels ? { labels: describing.labels } : {}),
        ...(describing.tags ? { tags: describing.tags } : {}),
        ...(baselineName !== undefined && baselineName !== name ? { baselineName } : {}),
        ...(prAccumulator ? { pr: toArmAggregate(prAccumulator) } : {}),
        ...(baselineAccumulator ? { baseline: toArmAggregate(baselineAccumulator) } : {}),
      });
    };
    for (const [name, prAccumulator] of pr) {
      const baselineName = baselineNameOf.get(name) ?? (joined.has(name) ? undefined : name);
      const baselineAccumulator = baselineName === undefined ? undefined : baseline.get(baselineName);
      push(name, prAccumulator, baselineAccumulator, baselineAccumulator ? baselineName : undefined);
    }
    for (const [name, baselineAccumulator] of baseline) {
      if (!pr.has(name) && !joined.has(name)) push(name, undefined, baselineAccumulator);
    }
    return {
      arches: [...arches].sort(),
      iterations: { pr: countIterations(pr), baseline: countIterations(baseline) },
      clusters: { pr: toArmClusters(layouts.pr.pr), baseline: toArmClusters(baselineLayout) },
      tests,
      records,
      duplicates,
    };
  }

  return { add, finish };
}

/**
 * PR-arm names whose test the baseline arm knows by another name: a spec renamed in the PR keeps
 * its first name as `originalName`, which is the released spec's name (or, for a test renamed
 * before, the released spec's own `originalName`). A first name shared by several tests of an arm
 * joins nothing: the pairing would be a guess.
 */
function renamesAcross(pr: Group, baseline: Group): Map<string, string> {
  const byFirstName = (group: Group) => {
    const names = new Map<string, string[]>();
    for (const [name, accumulator] of group) {
      const first = accumulator.originalName ?? name;
      names.set(first, [...(names.get(first) ?? []), name]);
    }
    return names;
  };
  const prByFirst = byFirstName(pr);
  const baselineByFirst = byFirstName(baseline);
  const renamed = new Map<string, string>();
  for (const [first, [prName, ...morePr]] of prByFirst) {
    const [baselineName, ...moreBaseline] = baselineByFirst.get(first) ?? [];
    if (prName === undefined || baselineName === undefined || morePr.length || moreBaseline.length) continue;
    if (prName !== baselineName) renamed.set(prName, baselineName);
  }
  return renamed;
}

/** Keeps an iteration's first-tried disruption: a retry ran after the rest of the iteration, alone. */
function noteDisruption(accumulator: Accumulator, record: ResultRecord): void {
  accumulator.disruption ??= new Map();
  const kept = accumulator.disruption.get(record.iteration);
  if (kept && kept.attempt <= record.attempt) return;
  accumulator.disruption.set(record.iteration, {
    iteration: record.iteration,
    attempt: record.attempt,
    ...(record.cluster ? { cluster: record.cluster } : {}),
    ...(record.startTime ? { startTime: record.startTime } : {}),
    result: record.result,
    entries: record.disruption!,
  });
}

/** Whether a failure at this iteration and attempt comes before the one kept so far. */
function isEarlier(record: { iteration: number; attempt: number }, kept: FirstFailure | undefined): boolean {
  return (
    !kept ||
    record.iteration < kept.iteration ||
    (record.iteration === kept.iteration && record.attempt < kept.attempt)
  );
}

export type ResultsAggregator = ReturnType<typeof createResultsAggregator>;
