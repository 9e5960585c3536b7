import { NETWORK_PATHS } from "@netstress/core/model/network-paths.ts";
import type { Lifecycle } from "@netstress/core/model/ote-result-fields.ts";
import { benjaminiHochberg } from "./benjamini-hochberg.ts";
import { clusterRankTest } from "./cluster-rank-test.ts";
import { formatPValue as formatP } from "./format-statistics.ts";
import {
  DEFAULT_DISRUPTION_SETTINGS,
  DISRUPTION_VERDICTS,
  type DisruptionAnalysis,
  type DisruptionArmSummary,
  type DisruptionRow,
  type DisruptionSample,
  type DisruptionSettings,
  type DisruptionVerdict,
} from "./disruption-types.ts";
import type { AggregatedRun } from "./types.ts";

/** One arm of one row: each sample's disrupted seconds and the unit (cluster or iteration) it belongs to. */
interface ArmValues {
  values: number[];
  units: number[][];
  clusters: number;
  overBudget: number;
  intervals: number;
  budgetSeconds: number | null;
}

interface Candidate {
  test: string;
  component: string;
  lifecycle: Lifecycle;
  path: string;
  connection: "new" | "reused";
  pr: ArmValues;
  baseline: ArmValues;
  pValue: number | null;
  testable: boolean;
}

/** Nearest-rank percentile of sorted values: the smallest value at or above `fraction` of them. */
function percentile(sorted: readonly number[], fraction: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)]!;
}

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return values.length > 0 ? sum / values.length : 0;
}

function armValues(
  samples: readonly DisruptionSample[],
  key: string,
  unit: "cluster" | "iteration",
): ArmValues {
  const values: number[] = [];
  const byUnit = new Map<string, number[]>();
  const clusters = new Set<string>();
  let overBudget = 0;
  let intervals = 0;
  let budgetSeconds: number | null = null;
  for (const sample of samples) {
    const entry = sample.entries.find((e) => `${e.path} ${e.connection}` === key);
    if (!entry) continue;
    values.push(entry.disruptedSeconds);
    if (sample.cluster) clusters.add(sample.cluster);
    const unitKey = unit === "cluster" && sample.cluster ? `c:${sample.cluster}` : `i:${sample.iteration}`;
    let list = byUnit.get(unitKey);
    if (!list) byUnit.set(unitKey, (list = []));
    list.push(entry.disruptedSeconds);
    if (entry.disruptedSeconds > entry.budgetSeconds) overBudget++;
    intervals += entry.intervals.length + (entry.intervalsOmitted ?? 0);
    budgetSeconds = Math.max(budgetSeconds ?? 0, entry.budgetSeconds);
  }
  return {
    values,
    units: [...byUnit.values()],
    clusters: clusters.size,
    overBudget,
    intervals,
    budgetSeconds,
  };
}

function summarize(arm: ArmValues): DisruptionArmSummary {
  const sorted = [...arm.values].sort((a, b) => a - b);
  return {
    samples: sorted.length,
    clusters: arm.clusters,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    p99IsMax: sorted.length > 0 && Math.ceil(0.99 * sorted.length) === sorted.length,
    mean: sorted.length > 0 ? mean(sorted) : null,
    max: sorted.at(-1) ?? null,
    overBudget: arm.overBudget,
    intervals: arm.intervals,
    budgetSeconds: arm.budgetSeconds,
  };
}

/**
 * The smallest p-value the row's values could give with these units: the largest values in the PR,
 * dealt round-robin over its units so that they are alike. A row that cannot reach q even so stays
 * out of the Benjamini–Hochberg family.
 */
function minimumPValue(pr: ArmValues, baseline: ArmValues): number {
  const all = [...pr.values, ...baseline.values].sort((a, b) => b - a);
  const deal = (units: readonly number[][], values: readonly number[]) => {
    const dealt = units.map(() => [] as number[]);
    const room = units.map((unit) => unit.length);
    let k = 0;
    for (const value of values) {
      while (room[k % units.length] === 0) k++;
      dealt[k % units.length]!.push(value);
      room[k % units.length]!--;
      k++;
    }
    return dealt;
  };
  const result = clusterRankTest({
    pr: deal(pr.units, all.slice(0, pr.values.length)),
    baseline: deal(baseline.units, all.slice(pr.values.length)),
  });
  return result?.pValue ?? 1;
}

const shifted = (units: readonly number[][], by: number) => units.map((unit) => unit.map((v) => v + by));

/**
 * Smallest δ (s) such that adding δ to every PR iteration's disruption would be flagged: the test at
 * the lone-discovery level and the minimum-shift guard. Null when even PR values above every
 * baseline value would not be. Bisection: the test's p falls as the PR's values rise.
 */
function minimumDetectableShift({
  candidate,
  alpha,
  settings,
}: {
  candidate: Candidate;
  alpha: number;
  settings: DisruptionSettings;
}): number | null {
  const { pr, baseline } = candidate;
  const gap = mean(pr.values) - mean(baseline.values);
  const flagged = (delta: number) => {
    if (gap + delta < settings.minimumShiftSeconds) return false;
    const result = clusterRankTest({ pr: shifted(pr.units, delta), baseline: baseline.units });
    return result !== null && result.pValue <= alpha;
  };
  let high = Math.max(
    1,
    Math.max(...baseline.values) - Math.min(...pr.values) + 1,
    settings.minimumShiftSeconds - gap,
  );
  if (!flagged(high)) return null;
  let low = 0;
  if (flagged(low)) return 0;
  for (let step = 0; step < 24; step++) {
    const middle = (low + high) / 2;
    if (flagged(middle)) high = middle;
    else low = middle;
  }
  return Math.ceil(high * 10) / 10;
}

const seconds = (value: number | null) =>
  value === null ? "–" : `${Number.isInteger(value) ? value : value.toFixed(1)} s`;

/** "P50 0 s, P99 4 s (max of 10)" — P99 of fewer than 100 samples is their largest, and says so. */
export function describeDisruptionArm(summary: DisruptionArmSummary): string {
  if (summary.samples === 0) return "no samples";
  const p99 = summary.p99IsMax
    ? `P99 ${seconds(summary.p99)} (max of ${summary.samples})`
    : `P99 ${seconds(summary.p99)} of ${summary.samples}`;
  return `P50 ${seconds(summary.p50)}, ${p99}`;
}

/**
 * Disruption per test × path × connection, PR against baseline (pure). Each row's
 * `disruptedSeconds` per iteration are compared with a one-sided rank test on units — clusters
 * when every record names its cluster, iterations otherwise — so cluster weather does not pass for
 * a regression; Benjamini–Hochberg across the rows that can reach significance; a regression also
 * needs `minimumSamples` per arm and a mean shift of at least `minimumShiftSeconds`. Every other row
 * says what it would have caught. Undefined when no test reported disruption.
 */
export function compareDisruption({
  run,
  unit,
  onePerArm = false,
  settings = DEFAULT_DISRUPTION_SETTINGS,
}: {
  run: AggregatedRun;
  unit: "cluster" | "iteration";
  /** Both arms ran on one cluster each: nothing separates the PR from its cluster. */
  onePerArm?: boolean;
  settings?: DisruptionSettings;
}): DisruptionAnalysis | undefined {
  const reporting = run.tests.filter((test) => test.pr?.disruption || test.baseline?.disruption);
  if (reporting.length === 0) return undefined;
  const candidates: Candidate[] = [];
  for (const test of reporting) {
    const prSamples = test.pr?.disruption ?? [];
    const baselineSamples = test.baseline?.disruption ?? [];
    const keys = new Map<string, { path: string; connection: "new" | "reused" }>();
    for (const sample of [...prSamples, ...baselineSamples])
      for (const entry of sample.entries)
        keys.set(`${entry.path} ${entry.connection}`, { path: entry.path, connection: entry.connection });
    const ordered = [...keys.entries()].sort(([, a], [, b]) => {
      const rank = (path: string) => {
        // Paths the extension probes in its order; any other a binary reports, after them.
        const known = (NETWORK_PATHS as readonly string[]).indexOf(path);
        return known < 0 ? NETWORK_PATHS.length : known;
      };
      return (
        rank(a.path) - rank(b.path) ||
        a.path.localeCompare(b.path) ||
        a.connection.localeCompare(b.connection)
      );
    });
    for (const [key, { path, connection }] of ordered) {
      const pr = armValues(prSamples, key, unit);
      const baseline = armValues(baselineSamples, key, unit);
      const result = onePerArm ? null : clusterRankTest({ pr: pr.units, baseline: baseline.units });
      candidates.push({
        test: test.name,
        component: test.component,
        lifecycle: test.lifecycle,
        path,
        connection,
        pr,
        baseline,
        pValue: result?.pValue ?? null,
        testable: result !== null && minimumPValue(pr, baseline) <= settings.q,
      });
    }
  }

  const family = candidates.filter((candidate) => candidate.testable);
  const qValues = benjaminiHochberg(family.map((candidate) => candidate.pValue!));
  const qOf = new Map(family.map((candidate, index) => [candidate, qValues[index]!]));

  const rows = candidates.map((candidate): DisruptionRow => {
    const pr = summarize(candidate.pr);
    const baseline = summarize(candidate.baseline);
    const qValue = qOf.get(candidate) ?? null;
    const row = (
      verdict: DisruptionVerdict,
      reason: string,
      minDetectableShiftSeconds: number | null = null,
    ) => ({
      test: candidate.test,
      component: candidate.component,
      lifecycle: candidate.lifecycle,
      path: candidate.path,
      connection: candidate.connection,
      pr,
      baseline,
      verdict,
      reason,
      pValue: candidate.pValue,
      qValue,
      minDetectableShiftSeconds,
    });
    if (pr.samples === 0)
      return row(
        "inconclusive",
        `not reported by the PR arm; the baseline reported it ${baseline.samples} time(s)`,
      );
    if (baseline.samples === 0)
      return row(
        "inconclusive",
        `only the PR reported it (${describeDisruptionArm(pr)}); nothing to compare with`,
      );
    const vs = `PR ${describeDisruptionArm(pr)}, baseline ${describeDisruptionArm(baseline)}`;
    const quiet = pr.max === 0 && baseline.max === 0;
    if (onePerArm) {
      return quiet
        ? row("stable", `no disruption in either arm; 1 cluster per arm, so no detectable shift is stated`)
        : row(
            "inconclusive",
            `${vs}: 1 cluster per arm: a disruption difference cannot be told apart from the cluster`,
          );
    }
    const significance = candidate.pValue === null ? "" : `; p=${formatP(candidate.pValue)}`;
    const gap = mean(candidate.pr.values) - mean(candidate.baseline.values);
    const enough = pr.samples >= settings.minimumSamples && baseline.samples >= settings.minimumSamples;
    if (qValue !== null && qValue <= settings.q && enough && gap >= settings.minimumShiftSeconds) {
      return row(
        "regression",
        `${vs}: disrupted ${gap.toFixed(1)} s longer on average${significance}, q=${formatP(qValue)}`,
      );
    }
    const alpha = settings.q / (family.length + (candidate.testable ? 0 : 1));
    const minimum = minimumDetectableShift({ candidate, alpha, settings });
    const bound =
      minimum === null
        ? `no shift could have been told apart from the baseline with these ${unit === "cluster" ? "clusters" : "samples"}`
        : `would have flagged +${seconds(minimum)} or more on every PR iteration`;
    if (!enough)
      return row(
        "inconclusive",
        `${vs}: too few samples to judge (need ${settings.minimumSamples} in each arm)`,
        minimum,
      );
    if (quiet)
      return row(
        "stable",
        `no disruption in either arm (${pr.samples} and ${baseline.samples} samples); ${bound}`,
        minimum,
      );
    if (qValue !== null && qValue <= settings.q)
      return row(
        "stable",
        `${vs}${significance}, q=${formatP(qValue)}: longer in the PR, but by ${gap.toFixed(1)} s on average, under the ${seconds(settings.minimumShiftSeconds)} that counts`,
        minimum,
      );
    if (minimum === null && pr.max! > 0) return row("inconclusive", `${vs}${significance}: ${bound}`, null);
    return row("stable", `${vs}${significance}; ${bound}`, minimum);
  });

  const counts = Object.fromEntries(DISRUPTION_VERDICTS.map((v) => [v, 0])) as Record<
    DisruptionVerdict,
    number
  >;
  for (const row of rows) counts[row.verdict]++;
  return {
    unit,
    method:
      unit === "cluster"
        ? onePerArm
          ? "disruption: 1 cluster per arm, so no difference between the arms is judged"
          : "disruption: one-sided rank test on clusters (each cluster's mean rank, Student's t), Benjamini–Hochberg across paths"
        : "disruption: one-sided rank test on iterations as independent draws (the records name no cluster), Benjamini–Hochberg across paths",
    familySize: family.length,
    settings,
    rows,
    counts,
    samples: reporting.map((test) => ({
      test: test.name,
      pr: test.pr?.disruption ?? [],
      baseline: test.baseline?.disruption ?? [],
    })),
  };
}
