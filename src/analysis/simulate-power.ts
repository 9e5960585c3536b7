import { clusterExactTest } from "./cluster-exact-test.ts";
import { moderateDispersions } from "./cluster-rule.ts";
import { passesGuards } from "./flag-rule.ts";
import type { PowerDesign, WeatherModel } from "./power-types.ts";
import { simulateWeatherCounts } from "./simulate-weather-counts.ts";
import { DEFAULT_ANALYSIS_SETTINGS, type AnalysisSettings } from "./types.ts";
import { seededRandom } from "../runner/seeded-random.ts";

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

export interface PowerPoint {
  baseRate: number;
  rise: number;
  /** Share of the simulated regressions at this base rate and rise the analysis flagged. */
  power: number;
  samples: number;
}

/**
 * Power of the analysis' cluster rule to flag one test whose failure rate the PR raises, by
 * simulation. Each round simulates a whole run of `design.tests` tests under `model` (none of which
 * the PR changes) and judges it as `judgeTests` does: the dispersion prior fitted across its tests,
 * the Tarone family (tests whose smallest achievable p-value is ≤ q). Into that run, `copies`
 * regressed tests per (base rate, rise) are judged one at a time, each as the run's only regression:
 * its own dispersion moderated against the run's prior, the cluster exact test at the level
 * Benjamini–Hochberg gives a lone discovery (q / (family + 1)), and the guards. Seeded: the same
 * arguments give the same figures.
 */
export function simulatePower({
  design,
  model,
  points,
  rounds,
  copies,
  seed,
  settings = DEFAULT_ANALYSIS_SETTINGS,
}: {
  design: PowerDesign;
  model: WeatherModel;
  points: readonly { baseRate: number; rise: number }[];
  rounds: number;
  copies: number;
  seed: string;
  settings?: AnalysisSettings;
}): PowerPoint[] {
  const flagged = new Array<number>(points.length).fill(0);
  // One cluster per arm judges nothing (docs/analysis.md): no power at all.
  if (design.clustersPerArm >= 2) {
    const random = seededRandom(`${seed} ${JSON.stringify(design)}`);
    const planted = points.flatMap((point) => Array.from({ length: copies }, () => point));
    for (let round = 0; round < rounds; round++) {
      const run = simulateWeatherCounts({ random, model, design, background: design.tests, planted });
      const moderated = moderateDispersions(run.background);
      let family = 0;
      run.background.forEach(([pr, baseline], index) => {
        if (sum(pr.failed) + sum(baseline.failed) === 0) return;
        const { minimum } = clusterExactTest({
          prSizes: pr.runs,
          baselineSizes: baseline.runs,
          prFailed: sum(pr.failed),
          baselineFailed: sum(baseline.failed),
          rho: moderated.dispersions[index]!.rho,
        });
        if (minimum <= settings.q) family++;
      });
      const alpha = settings.q / (family + 1);
      run.planted.forEach((arms, index) => {
        const [pr, baseline] = arms;
        const prFailed = sum(pr.failed);
        const baselineFailed = sum(baseline.failed);
        if (prFailed === 0) return;
        const comparison = { prRuns: sum(pr.runs), baselineRuns: sum(baseline.runs), baselineFailed };
        if (!passesGuards({ prFailed, comparison, settings })) return;
        const { pValue } = clusterExactTest({
          prSizes: pr.runs,
          baselineSizes: baseline.runs,
          prFailed,
          baselineFailed,
          rho: moderated.moderate(arms).rho,
        });
        if (pValue <= alpha) flagged[Math.floor(index / copies)]!++;
      });
    }
  }
  const samples = rounds * copies;
  return points.map((point, index) => ({ ...point, power: flagged[index]! / samples, samples }));
}
