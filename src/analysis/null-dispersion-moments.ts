import { seededRandom } from "../runner/seeded-random.ts";
import { clusterDispersion } from "./cluster-dispersion.ts";

/** Draws of the null per test shape: enough for a mean and variance that are averaged over dozens of tests. */
const DRAWS = 48;
const MAX_TRIES = 8 * DRAWS;

export interface LogDispersionMoments {
  /** E[ln φ̂] when the clusters do not differ (φ = 1). */
  mean: number;
  /** Var[ln φ̂] when the clusters do not differ. */
  variance: number;
}

/**
 * The sampling mean and variance of ln φ̂ for a test of this shape (iterations per cluster, each
 * arm's failure rate) when its clusters do not differ, by a seeded parametric bootstrap: counts
 * drawn binomially per cluster, kept when they give an estimate on the same degrees of freedom. With a
 * handful of iterations per cluster Pearson's X² is far from χ² (its log varies less, or more
 * for rare failures, than ψ′(d/2) says), and moderating with the χ² moments would misjudge how
 * much tests truly differ — the loss of information at low counts that Lun & Smyth (2017) correct
 * edgeR's degrees of freedom for. Null when too few draws qualify.
 */
export function nullLogDispersionMoments({
  sizes,
  rates,
  df,
}: {
  sizes: readonly (readonly number[])[];
  rates: readonly number[];
  /** The observed estimate's degrees of freedom: draws in which other arms qualify are not the same estimator. */
  df: number;
}): LogDispersionMoments | null {
  const random = seededRandom(
    `null-dispersion ${sizes.map((arm) => arm.join(",")).join("|")} ${rates.join(",")}`,
  );
  const logs: number[] = [];
  for (let tries = 0; tries < MAX_TRIES && logs.length < DRAWS; tries++) {
    const arms = sizes.map((arm, a) => {
      const failed = arm.map((n) => {
        let count = 0;
        for (let i = 0; i < n; i++) if (random() < rates[a]!) count++;
        return count;
      });
      return { runs: arm, failed };
    });
    const estimate = clusterDispersion(arms);
    if (estimate.df === df && estimate.phi > 0) logs.push(Math.log(estimate.phi));
  }
  if (logs.length < DRAWS / 2) return null;
  const mean = logs.reduce((sum, value) => sum + value, 0) / logs.length;
  const variance = logs.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (logs.length - 1);
  return { mean, variance };
}
