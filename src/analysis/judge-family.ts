import { benjaminiHochberg } from "./benjamini-hochberg.ts";
import { criticalFailureCount } from "./flag-rule.ts";
import type { Candidate } from "./judge-candidates.ts";
import type { JudgeCache } from "./judge-cache.ts";
import { minimumDetectableFailureRate } from "./minimum-detectable-failure-rate.ts";
import type { AnalysisSettings } from "./types.ts";

/** What the family says of one candidate. */
export interface FamilyJudgement {
  /** Its Benjamini–Hochberg q-value; null outside the family. */
  qValue: number | null;
  /** The smallest PR failure rate it would have caught at the family's level; null when none. */
  minDetectableFailureRate: number | null;
}

/** ρ to two significant digits: the detectable rate is a rough statement, and it caches well. */
const roundedRho = (rho: number) => (rho === 0 ? 0 : Number(rho.toPrecision(2)));

function meanClusterSize({
  prSizes,
  baselineSizes,
}: {
  prSizes: readonly number[];
  baselineSizes: readonly number[];
}) {
  let runs = 0;
  for (const n of prSizes) runs += n;
  for (const n of baselineSizes) runs += n;
  return runs / Math.max(1, prSizes.length + baselineSizes.length);
}

/**
 * The multiple-testing family — the candidates whose test could reach significance — with their
 * Benjamini–Hochberg q-values, and for every compared candidate the failure rate it could have
 * detected. `rhoAtRate` is the run's dispersion trend under the cluster rule.
 */
export function judgeFamily({
  candidates,
  rhoAtRate,
  settings,
  cache,
}: {
  candidates: readonly Candidate[];
  rhoAtRate: ((rate: number, meanSize: number) => number) | undefined;
  settings: AnalysisSettings;
  cache: JudgeCache;
}): { size: number; judgements: FamilyJudgement[] } {
  const family = candidates.filter((candidate) => candidate.testable);
  const qValues = benjaminiHochberg(family.map((candidate) => candidate.pValue!));
  const qByCandidate = new Map(family.map((candidate, index) => [candidate, qValues[index]!]));

  function detectable(candidate: Candidate, comparison: NonNullable<Candidate["comparison"]>) {
    // The level a lone discovery would need: if this test were the only one flagged, BH rejects it at q/m.
    const alpha = settings.q / (family.length + (candidate.testable ? 0 : 1));
    const historyKey = comparison.history ? `${comparison.history.runs}/${comparison.history.passes}` : "-";
    // What a PR failure rate to detect would face is the dispersion the trend gives at that rate,
    // not this test's own (a clean test has none): one function per run, so the cache keys stay few.
    const clusters = comparison.clusters && {
      ...comparison.clusters,
      rhoAtRate: (rate: number) => roundedRho(rhoAtRate!(rate, meanClusterSize(comparison.clusters!))),
    };
    const clusterKey = clusters
      ? `${cache.sizesKey(clusters.prSizes)}|${cache.sizesKey(clusters.baselineSizes)}`
      : "-";
    const key = `${comparison.prRuns}:${comparison.baselineRuns}:${comparison.baselineFailed}:${historyKey}:${clusterKey}:${alpha}`;
    return cache.detectableRate(key, () => {
      const critical = criticalFailureCount({
        alpha,
        comparison: { ...comparison, ...(clusters ? { clusters } : {}) },
        settings,
      });
      return critical === null
        ? null
        : minimumDetectableFailureRate({
            runs: comparison.prRuns,
            criticalFailures: critical,
            power: settings.power,
            ...(clusters ? { clusters: { sizes: clusters.prSizes, rho: clusters.rhoAtRate } } : {}),
          });
    });
  }

  return {
    size: family.length,
    judgements: candidates.map((candidate) => ({
      qValue: qByCandidate.get(candidate) ?? null,
      minDetectableFailureRate: candidate.comparison ? detectable(candidate, candidate.comparison) : null,
    })),
  };
}
