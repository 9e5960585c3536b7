import { benjaminiHochberg } from "./benjamini-hochberg.ts";
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
 * A crossover's upgrade effect as the analysis saw it: over every simulated run, the background
 * tests only the upgrade changed (the PR left them alone), how many of them the run called
 * regressions, and in how many runs it called at least one.
 */
export interface UpgradeBlame {
  changed: number;
  blamed: number;
  runsBlamed: number;
  runs: number;
}

/**
 * Power of the analysis' cluster rule to flag one test whose failure rate the PR raises, by
 * simulation. Each round simulates a whole run of `design.tests` tests under `model` (none of which
 * the PR changes) and judges it as `judgeTests` does: the dispersion prior fitted across its tests,
 * the Tarone family (tests whose smallest achievable p-value is ≤ q). Into that run, `copies`
 * regressed tests per (base rate, rise) are judged one at a time, each as the run's only regression:
 * its own dispersion moderated against the run's prior, the cluster exact test at the level
 * Benjamini–Hochberg gives a lone discovery (q / (family + 1)), and the guards. With a crossover,
 * whose PR half runs after an upgrade, the background holds tests the upgrade changed
 * (`model.upgrade`); the run is judged as the analysis judges it, which counts that change as the
 * PR's, and `upgrade` says how often its Benjamini–Hochberg step called one of them a regression.
 * Seeded: the same arguments give the same figures.
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
}): { points: PowerPoint[]; upgrade: UpgradeBlame | null } {
  const flagged = new Array<number>(points.length).fill(0);
  const upgrade: UpgradeBlame = { changed: 0, blamed: 0, runsBlamed: 0, runs: 0 };
  // One cluster per arm judges nothing (docs/analysis.md): no power at all.
  if (design.clustersPerArm >= 2) {
    const random = seededRandom(`${seed} ${JSON.stringify(design)}`);
    const planted = points.flatMap((point) => Array.from({ length: copies }, () => point));
    for (let round = 0; round < rounds; round++) {
      const run = simulateWeatherCounts({ random, model, design, background: design.tests, planted });
      const moderated = moderateDispersions(run.background);
      const family: { index: number; pValue: number }[] = [];
      run.background.forEach(([pr, baseline], index) => {
        if (sum(pr.failed) + sum(baseline.failed) === 0) return;
        const { minimum, pValue } = clusterExactTest({
          prSizes: pr.runs,
          baselineSizes: baseline.runs,
          prFailed: sum(pr.failed),
          baselineFailed: sum(baseline.failed),
          rho: moderated.dispersions[index]!.rho,
        });
        if (minimum <= settings.q) family.push({ index, pValue });
      });
      if (design.kind === "crossover") {
        const qValues = benjaminiHochberg(family.map((test) => test.pValue));
        const blamed = family.filter(({ index }, position) => {
          if (!run.upgraded[index] || qValues[position]! > settings.q) return false;
          const [pr, baseline] = run.background[index]!;
          const comparison = {
            prRuns: sum(pr.runs),
            baselineRuns: sum(baseline.runs),
            baselineFailed: sum(baseline.failed),
          };
          return passesGuards({ prFailed: sum(pr.failed), comparison, settings });
        }).length;
        upgrade.changed += run.upgraded.filter(Boolean).length;
        upgrade.blamed += blamed;
        upgrade.runsBlamed += blamed > 0 ? 1 : 0;
        upgrade.runs++;
      }
      const alpha = settings.q / (family.length + 1);
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
  return {
    points: points.map((point, index) => ({ ...point, power: flagged[index]! / samples, samples })),
    upgrade: design.kind === "crossover" ? upgrade : null,
  };
}
