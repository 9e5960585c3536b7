import { betaBinomialSumPmf } from "./beta-binomial-sum.ts";
import { binomialUpperTail } from "./binomial.ts";

function clusteredUpperTail({
  sizes,
  rho,
  k,
  p,
}: {
  sizes: readonly number[];
  rho: number | ((rate: number) => number);
  k: number;
  p: number;
}) {
  const pmf = betaBinomialSumPmf({ sizes, p, rho: typeof rho === "number" ? rho : rho(p) });
  let tail = 0;
  for (let x = k; x < pmf.length; x++) tail += pmf[x]!;
  return Math.min(1, tail);
}

/**
 * The smallest failure rate p at which `runs` iterations reach `criticalFailures` or more failures
 * with probability `power` — i.e. the regression a test flagged from that many failures on would
 * catch 80% of the time. Bisection on the binomial upper tail, which rises monotonically with p.
 * With `clusters`, the PR arm's failures are beta-binomial per cluster (failures on one cluster
 * come together), so fewer clusters or more dispersion between them raise the rate.
 */
export function minimumDetectableFailureRate({
  runs,
  criticalFailures,
  power,
  clusters,
}: {
  runs: number;
  criticalFailures: number;
  power: number;
  /** `rho` may depend on the failure rate (the dispersion trend). */
  clusters?: { sizes: readonly number[]; rho: number | ((rate: number) => number) };
}): number | null {
  if (criticalFailures > runs) return null;
  let low = 0;
  let high = 1;
  // 2⁻³⁰ is far finer than any rate is stated; the clustered tail costs a convolution per step.
  for (let step = 0; step < (clusters ? 30 : 60); step++) {
    const middle = (low + high) / 2;
    const tail = clusters
      ? clusteredUpperTail({ ...clusters, k: criticalFailures, p: middle })
      : binomialUpperTail({ n: runs, k: criticalFailures, p: middle });
    if (tail >= power) high = middle;
    else low = middle;
  }
  return high;
}
