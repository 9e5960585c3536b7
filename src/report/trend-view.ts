import type { Arch } from "@netstress/core/arch/arch.ts";
import { failedIterations } from "../analysis/failed-iterations.ts";
import type { FirstBadPayload } from "../analysis/first-bad-payload.ts";
import type { PayloadCounts, TestCounts } from "../analysis/payload-counts.ts";
import { wilsonInterval } from "../analysis/wilson-interval.ts";
import type { ComponentChange, PayloadChanges } from "../payload/payload-changes.ts";

/**
 * A pass rate with its 95% Wilson interval, to four decimals (a percentage shown to a point is
 * rounded once), and the counts behind it:
 * [rate, low, high, executions, failed iterations (flakes included), flakes]. A flake counts as
 * failed, as everywhere in the analysis.
 */
export type TrendRate = [number, number, number, number, number, number];

/** What changed in a payload since the one before it, or why that is not known. */
export type TrendChanges =
  { known: true; changes: ComponentChange[]; unchanged: number } | { known: false; reason: string };

export interface TrendPayload {
  release: string;
  payload: string;
  recordedAt: string;
  runs: number;
  /** Null for the oldest payload: nothing before it to compare with. */
  changes: TrendChanges | null;
}

export interface TrendTest {
  name: string;
  /** One entry per payload (oldest first), null where the test did not run. */
  rates: (TrendRate | null)[];
  /** On the newest payload the test ran on. */
  latest: TrendRate;
  /** Pooled over every payload before that one; null when it ran on one payload only. */
  earlier: TrendRate | null;
  /** latest − earlier pass rate, in points (negative: worse); null without an earlier rate. */
  moved: number | null;
}

/** A first bad payload, with the components that changed in it; null when its changes are not known. */
export type TrendFirstBad = FirstBadPayload & { suspects: ComponentChange[] | null };

/** What the trend page of a stream and arch shows and `netstress trends -o json` prints. */
export interface TrendView {
  stream: string;
  arch: Arch;
  /** Oldest first. */
  payloads: TrendPayload[];
  /** The tests that moved most first (by |moved|; those that ran on one payload last, by name). */
  tests: TrendTest[];
  /** Oldest first bad payload first. */
  firstBad: TrendFirstBad[];
  /** The scan behind them: its false discovery rate, over how many tests could be flagged at all. */
  firstBadScan: { q: number; familySize: number };
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;

function rateOf(counts: TestCounts): TrendRate | null {
  const failed = failedIterations(counts);
  const interval = wilsonInterval({ successes: counts.executions - failed, trials: counts.executions });
  if (!interval) return null;
  return [
    round((counts.executions - failed) / counts.executions),
    round(interval.low),
    round(interval.high),
    counts.executions,
    failed,
    counts.flakes,
  ];
}

function pooled(counts: readonly TestCounts[]): TestCounts {
  const sum = { executions: 0, failures: 0, flakes: 0 };
  for (const c of counts) {
    sum.executions += c.executions;
    sum.failures += c.failures;
    sum.flakes += c.flakes;
  }
  return sum;
}

/**
 * The trends of a stream on one arch (pure): per test, the pass rate on each payload with its
 * Wilson interval and how much the newest payload it ran on moved from the payloads before; per
 * payload, what changed since the previous one (`changes[i]`: from payload i−1 to i); and each first
 * bad payload the analysis found, with the components that changed in it as suspects.
 */
export function buildTrendView(input: {
  stream: string;
  arch: Arch;
  history: readonly PayloadCounts[];
  /** Per payload index ≥ 1: the changes since the payload before, or the error that kept them unknown. */
  changes: readonly (PayloadChanges | Error | undefined)[];
  /** The analysis' scan of this history for first bad payloads. */
  firstBad: { findings: readonly FirstBadPayload[]; familySize: number; q: number };
}): TrendView {
  const { history } = input;
  const payloads = history.map((entry, index): TrendPayload => {
    const changes = index === 0 ? undefined : input.changes[index];
    return {
      release: entry.release,
      payload: entry.payload,
      recordedAt: entry.recordedAt,
      runs: entry.runs,
      changes:
        index === 0
          ? null
          : changes === undefined
            ? { known: false, reason: "not read" }
            : changes instanceof Error
              ? { known: false, reason: changes.message }
              : { known: true, changes: changes.changes, unchanged: changes.unchanged },
    };
  });
  const names = [...new Set(history.flatMap((entry) => Object.keys(entry.tests)))];
  const tests = names.flatMap((name): TrendTest[] => {
    const counts = history.map((entry) => entry.tests[name]);
    const rates = counts.map((c) => (c ? rateOf(c) : null));
    const last = rates.findLastIndex((rate) => rate !== null);
    if (last < 0) return [];
    const before = counts.slice(0, last).filter((c): c is TestCounts => c !== undefined);
    const earlier = rateOf(pooled(before));
    const latest = rates[last]!;
    return [
      {
        name,
        rates,
        latest,
        earlier,
        moved: earlier ? Math.round((latest[0] - earlier[0]) * 1000) / 10 : null,
      },
    ];
  });
  tests.sort(
    (a, b) =>
      (b.moved === null ? -1 : Math.abs(b.moved)) - (a.moved === null ? -1 : Math.abs(a.moved)) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const firstBad = input.firstBad.findings.map((finding): TrendFirstBad => {
    const changes = payloads[finding.index]?.changes;
    return { ...finding, suspects: changes?.known ? changes.changes : null };
  });
  return {
    stream: input.stream,
    arch: input.arch,
    payloads,
    tests,
    firstBad,
    firstBadScan: { q: input.firstBad.q, familySize: input.firstBad.familySize },
  };
}
