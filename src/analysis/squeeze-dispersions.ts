import { digamma } from "./digamma.ts";
import type { LogDispersionMoments } from "./null-dispersion-moments.ts";
import { trigamma } from "./trigamma.ts";

/** One test's own dispersion estimate, with the sampling moments of its log under φ = 1 when known. */
export interface DispersionEstimate {
  phi: number;
  df: number;
  nullMoments?: LogDispersionMoments | null;
}

/** E and Var of ln φ̂ at φ = 1: measured for the test's shape when given, else those of χ²(d)/d. */
function logMoments({ df, nullMoments }: DispersionEstimate): LogDispersionMoments {
  return nullMoments ?? { mean: digamma(df / 2) - Math.log(df / 2), variance: trigamma(df / 2) };
}

/** The χ² degrees of freedom whose ln(χ²/d) varies as much as this estimate's log does: its weight. */
function effectiveDf(estimate: DispersionEstimate): number {
  return estimate.nullMoments ? 2 * trigammaInverse(estimate.nullMoments.variance) : estimate.df;
}

export interface DispersionPrior {
  /** Prior (typical) dispersion across tests. */
  phi: number;
  /** Prior degrees of freedom: how much a test's own estimate is pulled towards `phi`; Infinity = all share it. */
  df: number;
}

/** ψ′⁻¹(y) by Newton's method on 1/ψ′, as limma's trigammaInverse does (Smyth 2004). */
function trigammaInverse(y: number): number {
  if (y > 1e7) return 1 / Math.sqrt(y);
  if (y < 1e-6) return 1 / y;
  let x = 0.5 + 1 / y;
  for (let step = 0; step < 50; step++) {
    const t = trigamma(x);
    const change = (t * (1 - t / y)) / -polygammaTwo(x);
    x += change;
    if (-change / x < 1e-10) break;
  }
  return x;
}

/** ψ″(x) by a central difference of ψ′: enough for Newton steps. */
function polygammaTwo(x: number): number {
  const h = 1e-4 * Math.max(1, x);
  return (trigamma(x + h) - trigamma(x - h)) / (2 * h);
}

/**
 * Empirical-Bayes moderation of per-test dispersions: each estimate φ̂_g on d_g degrees of
 * freedom is taken as φ_g·χ²(d_g)/d_g with φ_g drawn from a scaled inverse-χ² prior (φ0, d0).
 * The prior is fitted by moments of log φ̂ (limma's fitFDist, Smyth 2004, used for dispersions by
 * edgeR's quasi-likelihood method, Lund et al. 2012, Chen, Lun & Smyth 2016) — with each test's
 * own sampling moments in place of χ² theory when they were measured — and each test's posterior
 * dispersion is (d0·φ0 + d_g·φ̂_g)/(d0 + d_g). Returns null when fewer than three tests carry an
 * estimate.
 */
export function fitDispersionPrior(estimates: readonly DispersionEstimate[]): DispersionPrior | null {
  const usable = estimates.filter(({ phi, df }) => df > 0 && phi > 0 && Number.isFinite(phi));
  if (usable.length < 3) return null;
  const moments = usable.map(logMoments);
  const e = usable.map(({ phi }, index) => Math.log(phi) - moments[index]!.mean);
  const mean = e.reduce((sum, value) => sum + value, 0) / e.length;
  const variance = e.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (e.length - 1);
  const sampling = moments.reduce((sum, moment) => sum + moment.variance, 0) / usable.length;
  const excess = variance - sampling;
  if (excess <= 0) {
    // No more spread than sampling alone explains: every test shares one dispersion.
    const pooled = Math.exp(mean);
    return { phi: pooled, df: Number.POSITIVE_INFINITY };
  }
  const df = 2 * trigammaInverse(excess);
  return { phi: Math.exp(mean + digamma(df / 2) - Math.log(df / 2)), df };
}

/** A test's posterior dispersion under the prior (its own estimate alone without one). */
export function moderatedDispersion({
  estimate,
  prior,
}: {
  estimate: DispersionEstimate;
  prior: DispersionPrior | null;
}): number {
  const own = estimate.df > 0 && Number.isFinite(estimate.phi);
  if (!prior) return own ? estimate.phi : 1;
  if (!own || prior.df === Number.POSITIVE_INFINITY) return prior.phi;
  const weight = effectiveDf(estimate);
  return (prior.df * prior.phi + weight * estimate.phi) / (prior.df + weight);
}
