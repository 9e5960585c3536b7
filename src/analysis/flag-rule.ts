import type { HistoryCounts } from "./types.ts";
import { applyHistoryRule } from "./history-rule.ts";
import { clusterExactTestGreater } from "./cluster-exact-test.ts";
import { fisherExactGreater } from "./fisher-exact.ts";
import type { AnalysisSettings } from "./types.ts";

/** What a regression decision sees: failed PR iterations against a fixed comparison. */
export interface Comparison {
  prRuns: number;
  baselineRuns: number;
  baselineFailed: number;
  history?: HistoryCounts;
  /** With the cluster rule: iterations per cluster of each arm and the test's failure correlation. */
  clusters?: {
    prSizes: readonly number[];
    baselineSizes: readonly number[];
    rho: number;
    /** When set, the correlation at the pooled failure rate of each table (the trend), in place of `rho`. */
    rhoAtRate?: (rate: number) => number;
  };
}

/**
 * The guards a significant test must also pass: enough failed PR iterations, a pass-rate drop of
 * more than the minimum (as Sippy does), and, with a history baseline, the aggregator rule.
 */
export function passesGuards({
  prFailed,
  comparison,
  settings,
}: {
  prFailed: number;
  comparison: Comparison;
  settings: AnalysisSettings;
}): boolean {
  const { prRuns, baselineRuns, baselineFailed, history } = comparison;
  if (prFailed < settings.minimumPrFailures) return false;
  const drop = (baselineRuns - baselineFailed) / baselineRuns - (prRuns - prFailed) / prRuns;
  if (!(drop > settings.minimumPassRateDrop)) return false;
  if (history && history.runs > 0) {
    const rule = applyHistoryRule({
      attempts: prRuns,
      passes: prRuns - prFailed,
      historicalPassRate: history.passes / history.runs,
    });
    if (rule.verdict !== "fail") return false;
  }
  return true;
}

/**
 * Whether `prFailed` failed PR iterations would be flagged at significance level `alpha`: the
 * guards and the p-value (Fisher's on iterations, or the cluster test) must agree. Monotone in prFailed, which the power computation
 * relies on.
 */
export function wouldFlag({
  prFailed,
  alpha,
  comparison,
  settings,
}: {
  prFailed: number;
  alpha: number;
  comparison: Comparison;
  settings: AnalysisSettings;
}): boolean {
  if (!passesGuards({ prFailed, comparison, settings })) return false;
  const { prRuns, baselineRuns, baselineFailed, clusters } = comparison;
  const rho = clusters?.rhoAtRate
    ? clusters.rhoAtRate((prFailed + baselineFailed) / (prRuns + baselineRuns))
    : clusters?.rho;
  const p = clusters
    ? clusterExactTestGreater({
        prSizes: clusters.prSizes,
        baselineSizes: clusters.baselineSizes,
        rho: rho!,
        prFailed,
        baselineFailed,
      })
    : fisherExactGreater({
        a: prFailed,
        b: prRuns - prFailed,
        c: baselineFailed,
        d: baselineRuns - baselineFailed,
      });
  return p <= alpha;
}

/**
 * The fewest failed PR iterations that would be flagged, or null when none would. With clusters
 * each decision costs two convolutions, so the search bisects (wouldFlag is monotone in prFailed);
 * the iteration rule's is cheap and scanned.
 */
export function criticalFailureCount(args: {
  alpha: number;
  comparison: Comparison;
  settings: AnalysisSettings;
}): number | null {
  const { prRuns } = args.comparison;
  if (!args.comparison.clusters) {
    for (let prFailed = 0; prFailed <= prRuns; prFailed++) {
      if (wouldFlag({ prFailed, ...args })) return prFailed;
    }
    return null;
  }
  if (!wouldFlag({ prFailed: prRuns, ...args })) return null;
  let low = -1; // never flagged
  let high = prRuns; // flagged
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (wouldFlag({ prFailed: middle, ...args })) high = middle;
    else low = middle;
  }
  return high;
}
