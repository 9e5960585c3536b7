import { studentTUpperTail } from "./student-t-upper-tail.ts";

export interface ClusterRankTest {
  /** One-sided: the PR's values rank higher than the baseline's. */
  pValue: number;
  t: number;
  df: number;
  /** Mean over the arm's units of their mean normalized rank (0.5 = like the pooled data). */
  prScore: number;
  baselineScore: number;
}

/** Mid-ranks of all values, normalized to (0, 1): (rank − ½)/N. */
function normalizedRanks(values: readonly number[]): number[] {
  const order = values.map((_, index) => index).sort((x, y) => values[x]! - values[y]!);
  const ranks = new Array<number>(values.length);
  for (let start = 0; start < order.length;) {
    let end = start + 1;
    while (end < order.length && values[order[end]!] === values[order[start]!]) end++;
    // Positions start..end−1 tie: each gets their mean 1-based rank.
    const midRank = (start + end + 1) / 2;
    for (let k = start; k < end; k++) ranks[order[k]!] = (midRank - 0.5) / values.length;
    start = end;
  }
  return ranks;
}

/**
 * A one-sided rank test that holds its error rate when units differ (clusters under test with
 * their own weather): every value is ranked against all the others, each unit is summarized by its
 * mean rank, and the arms' unit summaries are compared with Student's t on k_pr + k_baseline − 2
 * degrees of freedom. The ranks tame heavy tails (one 60 s outage weighs no more than a 3 s one
 * above the rest); the t on units, not values, charges the PR for what its clusters share. The
 * variance between units is floored at what sampling alone would make it (the within-unit variance
 * over the mean unit size): units can be alike, not more alike than chance. With one value per unit
 * this is the rank-transform t-test, close to Mann–Whitney. Null when nothing can be compared: every
 * value tied, an arm without values, or fewer than three units in all.
 */
export function clusterRankTest({
  pr,
  baseline,
}: {
  /** Per unit (cluster, or iteration), its values. */
  pr: readonly (readonly number[])[];
  baseline: readonly (readonly number[])[];
}): ClusterRankTest | null {
  const prUnits = pr.filter((unit) => unit.length > 0);
  const baselineUnits = baseline.filter((unit) => unit.length > 0);
  const k1 = prUnits.length;
  const k2 = baselineUnits.length;
  if (k1 === 0 || k2 === 0 || k1 + k2 < 3) return null;
  const units = [...prUnits, ...baselineUnits];
  const values = units.flat();
  const first = values[0]!;
  if (values.every((value) => value === first)) return null;
  const ranks = normalizedRanks(values);
  const scores: number[] = [];
  let withinSquares = 0;
  let offset = 0;
  for (const unit of units) {
    let sum = 0;
    for (let k = 0; k < unit.length; k++) sum += ranks[offset + k]!;
    const mean = sum / unit.length;
    for (let k = 0; k < unit.length; k++) withinSquares += (ranks[offset + k]! - mean) ** 2;
    scores.push(mean);
    offset += unit.length;
  }
  const armMean = (from: number, to: number) => {
    let sum = 0;
    for (let k = from; k < to; k++) sum += scores[k]!;
    return sum / (to - from);
  };
  const prScore = armMean(0, k1);
  const baselineScore = armMean(k1, k1 + k2);
  let betweenSquares = 0;
  for (let k = 0; k < k1 + k2; k++) betweenSquares += (scores[k]! - (k < k1 ? prScore : baselineScore)) ** 2;
  const df = k1 + k2 - 2;
  const n = values.length;
  const within = n > units.length ? withinSquares / (n - units.length) : 0;
  // The smallest variance a unit mean can have: sampling within a unit, and at least a twelfth of a rank step².
  const floor = Math.max(within / (n / units.length), 1 / (12 * n * n));
  const variance = Math.max(betweenSquares / df, floor);
  const t = (prScore - baselineScore) / Math.sqrt(variance * (1 / k1 + 1 / k2));
  return { pValue: studentTUpperTail({ t, df }), t, df, prScore, baselineScore };
}
