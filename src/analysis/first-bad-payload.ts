import { seededRandom } from "../runner/seeded-random.ts";
import { benjaminiHochberg } from "./benjamini-hochberg.ts";
import { failedIterations } from "./failed-iterations.ts";
import type { PayloadCounts } from "./payload-counts.ts";

/** Iterations run and failed (a flake counts as failed) on a stretch of payloads. */
export interface StretchCounts {
  executions: number;
  failures: number;
}

/** The earliest payload after which a test's failure rate rose. */
export interface FirstBadPayload {
  test: string;
  release: string;
  payload: string;
  /** Index of the first bad payload in the history given. */
  index: number;
  /** The payloads before it and the payloads from it on. */
  before: StretchCounts;
  after: StretchCounts;
  /** Permutation p-value of the scan's maximum: how often payloads in random order score as high. */
  pValue: number;
  /**
   * The rate at which a history with no change raises this alarm: the per-test level for one test;
   * in a scan over all tests, the Benjamini–Hochberg q-value (the false discovery rate at which it
   * is a discovery).
   */
  falseAlarmRate: number;
}

export interface FirstBadPayloadSettings {
  /** Per-test level: the chance a test whose rate never changed is flagged (findFirstBadPayload). */
  alpha: number;
  /** False discovery rate over all tests (scanFirstBadPayloads). */
  q: number;
  /** Payloads the test must have run before the change and from it on. */
  minimumPayloadsBefore: number;
  minimumPayloadsAfter: number;
  /** Guard: failed iterations from the change on. */
  minimumFailuresAfter: number;
  /** Guard: the failure rate must rise by more than this (0.05 = 5 points). */
  minimumIncrease: number;
  /** Permutations at most per test (fewer once the p-value is clearly large). */
  permutations: number;
  seed: string;
}

export const DEFAULT_FIRST_BAD_PAYLOAD_SETTINGS: FirstBadPayloadSettings = {
  alpha: 0.01,
  q: 0.05,
  minimumPayloadsBefore: 3,
  minimumPayloadsAfter: 2,
  minimumFailuresAfter: 3,
  minimumIncrease: 0.05,
  permutations: 9_999,
  seed: "first-bad-payload",
};

/** A permutation test stops once this many permuted histories scored at least as high (Besag & Clifford 1991). */
const EXCEEDANCES = 20;

interface Series {
  /** Indexes into the history of the payloads the test ran on. */
  at: number[];
  executions: Float64Array;
  failed: Float64Array;
}

function seriesOf(history: readonly PayloadCounts[], test: string): Series {
  const at: number[] = [];
  const executions: number[] = [];
  const failed: number[] = [];
  history.forEach((payload, index) => {
    const counts = payload.tests[test];
    if (!counts || counts.executions === 0) return;
    at.push(index);
    executions.push(counts.executions);
    failed.push(Math.min(counts.executions, failedIterations(counts)));
  });
  return { at, executions: Float64Array.from(executions), failed: Float64Array.from(failed) };
}

const xLogX = (x: number, n: number) => (x > 0 ? x * Math.log(x / n) : 0);
/** Binomial log-likelihood of y failures in n at their own rate. */
const logLikelihood = (y: number, n: number) => xLogX(y, n) + xLogX(n - y, n);

/**
 * Pearson's X² of payload counts around one rate, from sums over the stretch: Σ y²/n, Σ y, Σ n.
 * Σ (y − n·p)² / (n·p(1 − p)) = (Σ y²/n − 2p Σ y + p² Σ n) / (p(1 − p)).
 */
function pearson(squares: number, failed: number, executions: number): number {
  const p = failed / executions;
  if (p <= 0 || p >= 1) return 0;
  return Math.max(0, (squares - 2 * p * failed + p * p * executions) / (p * (1 - p)));
}

/**
 * The scan's statistic at every admissible first bad payload k (payloads before k against k on,
 * enough of each, and the guards hold: enough failures from k on, a large enough rise): the
 * binomial likelihood ratio for the step up, divided by the quasi-binomial dispersion of the
 * payloads around their stretch's rate (at least 1), so that payloads differing from one another
 * anyway (a flaky test, a bad cluster) weigh less (McCullagh & Nelder 1989, §4.5). Returns the
 * largest value and where; 0 and -1 when no admissible step up exists.
 */
function scan(
  executions: Float64Array,
  failed: Float64Array,
  settings: FirstBadPayloadSettings,
): { statistic: number; k: number } {
  const n = executions.length;
  let totalFailed = 0;
  let totalRuns = 0;
  let totalSquares = 0;
  for (let i = 0; i < n; i++) {
    totalFailed += failed[i]!;
    totalRuns += executions[i]!;
    totalSquares += (failed[i]! * failed[i]!) / executions[i]!;
  }
  const whole = logLikelihood(totalFailed, totalRuns);
  let best = 0;
  let bestK = -1;
  let beforeFailed = 0;
  let beforeRuns = 0;
  let beforeSquares = 0;
  const degrees = Math.max(1, n - 2);
  for (let k = 1; k < n; k++) {
    beforeFailed += failed[k - 1]!;
    beforeRuns += executions[k - 1]!;
    beforeSquares += (failed[k - 1]! * failed[k - 1]!) / executions[k - 1]!;
    if (k < settings.minimumPayloadsBefore || n - k < settings.minimumPayloadsAfter) continue;
    const afterFailed = totalFailed - beforeFailed;
    const afterRuns = totalRuns - beforeRuns;
    // The guards are part of the statistic, so that permuted histories face them too.
    if (afterFailed < settings.minimumFailuresAfter) continue;
    if (afterFailed / afterRuns - beforeFailed / beforeRuns <= settings.minimumIncrease) continue;
    const ratio =
      2 * (logLikelihood(beforeFailed, beforeRuns) + logLikelihood(afterFailed, afterRuns) - whole);
    const dispersion =
      (pearson(beforeSquares, beforeFailed, beforeRuns) +
        pearson(totalSquares - beforeSquares, afterFailed, afterRuns)) /
      degrees;
    const statistic = ratio / Math.max(1, dispersion);
    if (statistic > best) [best, bestK] = [statistic, k];
  }
  return { statistic: best, k: bestK };
}

/** How often the test's payloads in random order score at least as high (sequential: stops once it is clearly large). */
function permutationPValue(
  series: Series,
  observed: number,
  settings: FirstBadPayloadSettings,
  random: () => number,
): number {
  const n = series.at.length;
  const order = Array.from({ length: n }, (_, i) => i);
  const executions = new Float64Array(n);
  const failed = new Float64Array(n);
  let exceed = 0;
  for (let b = 1; b <= settings.permutations; b++) {
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (let i = 0; i < n; i++) {
      executions[i] = series.executions[order[i]!]!;
      failed[i] = series.failed[order[i]!]!;
    }
    if (scan(executions, failed, settings).statistic >= observed * (1 - 1e-12)) exceed++;
    if (exceed === EXCEEDANCES) return exceed / b;
  }
  return (exceed + 1) / (settings.permutations + 1);
}

/**
 * Whether a test can be flagged at all, from what no order of its payloads changes (Tarone 1990):
 * enough payloads, and enough failed iterations for the guards.
 */
function canBeFlagged(series: Series, settings: FirstBadPayloadSettings): boolean {
  return (
    series.at.length >= settings.minimumPayloadsBefore + settings.minimumPayloadsAfter &&
    series.failed.reduce((total, value) => total + value, 0) >= settings.minimumFailuresAfter
  );
}

/** The scan of one test: where its rate most likely stepped up, and the permutation p-value; undefined when nowhere. */
function candidateFor(
  history: readonly PayloadCounts[],
  series: Series,
  test: string,
  settings: FirstBadPayloadSettings,
): Omit<FirstBadPayload, "falseAlarmRate"> | undefined {
  const { statistic, k } = scan(series.executions, series.failed, settings);
  if (k < 0) return undefined;
  const n = series.at.length;
  const sum = (values: Float64Array, from: number, to: number) =>
    values.subarray(from, to).reduce((total, value) => total + value, 0);
  const index = series.at[k]!;
  return {
    test,
    release: history[index]!.release,
    payload: history[index]!.payload,
    index,
    before: { executions: sum(series.executions, 0, k), failures: sum(series.failed, 0, k) },
    after: { executions: sum(series.executions, k, n), failures: sum(series.failed, k, n) },
    pValue: permutationPValue(series, statistic, settings, seededRandom(`${settings.seed}\0${test}`)),
  };
}

/**
 * The first bad payload of one test (pure): the change point of its per-payload failure counts,
 * found by scanning every split of the history (oldest first) for the largest step up that passes
 * the guards (at least 3 failed iterations from it on, a rise of more than 5 points), and called
 * only when a permutation test of the scan's maximum is significant at `alpha`. Permuting payloads keeps
 * whatever makes payloads differ without a change — a flaky test, a bad cluster on one payload — so
 * the stated rate holds however overdispersed the counts are; the maximum over all splits makes the
 * search over where the change is part of the test. Undefined when nothing rose.
 */
export function findFirstBadPayload(input: {
  history: readonly PayloadCounts[];
  test: string;
  settings?: Partial<FirstBadPayloadSettings>;
}): FirstBadPayload | undefined {
  const settings = { ...DEFAULT_FIRST_BAD_PAYLOAD_SETTINGS, ...input.settings };
  const series = seriesOf(input.history, input.test);
  if (!canBeFlagged(series, settings)) return undefined;
  const candidate = candidateFor(input.history, series, input.test, settings);
  if (!candidate || candidate.pValue > settings.alpha) return undefined;
  return { ...candidate, falseAlarmRate: settings.alpha };
}

/**
 * The first bad payload of every test of a history whose rate rose, with the false discovery rate
 * controlled at q over the tests (Benjamini–Hochberg). The family is the tests that could be
 * flagged whatever the order of their payloads (Tarone 1990): a test that failed fewer than three
 * times in all cannot be. Each finding's falseAlarmRate is its q-value. The number
 * of permutations grows with the family, so that the smallest p-value a test can reach stays below
 * q divided by the family's size.
 */
export function scanFirstBadPayloads(input: {
  history: readonly PayloadCounts[];
  settings?: Partial<FirstBadPayloadSettings>;
}): { findings: FirstBadPayload[]; familySize: number; q: number } {
  const base = { ...DEFAULT_FIRST_BAD_PAYLOAD_SETTINGS, ...input.settings };
  const names = new Set<string>();
  for (const payload of input.history) for (const name of Object.keys(payload.tests)) names.add(name);
  const family = [...names]
    .map((test) => ({ test, series: seriesOf(input.history, test) }))
    .filter(({ series }) => canBeFlagged(series, base));
  // Enough permutations that the smallest p-value a test reaches is below q over the family's size.
  const settings = {
    ...base,
    permutations: Math.max(base.permutations, Math.ceil((2 * family.length) / base.q)),
  };
  const candidates = family.map(({ test, series }) => candidateFor(input.history, series, test, settings));
  const qValues = benjaminiHochberg(candidates.map((candidate) => candidate?.pValue ?? 1));
  const findings = candidates
    .flatMap((candidate, index) =>
      candidate && qValues[index]! <= settings.q ? [{ ...candidate, falseAlarmRate: qValues[index]! }] : [],
    )
    .sort((a, b) => a.index - b.index || a.test.localeCompare(b.test));
  return { findings, familySize: family.length, q: settings.q };
}
