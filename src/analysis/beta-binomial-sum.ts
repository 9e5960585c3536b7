import { logChoose } from "./log-factorial.ts";
import { logGamma } from "./log-gamma.ts";

const logBeta = (a: number, b: number) => logGamma(a) + logGamma(b) - logGamma(a + b);

/** P(X = x), x = 0..n, for X ~ BetaBinomial(n, mean p, intra-cluster correlation rho); rho = 0 is Binomial(n, p). */
function clusterPmf(n: number, p: number, rho: number): Float64Array {
  const pmf = new Float64Array(n + 1);
  if (p <= 0 || p >= 1) {
    pmf[p <= 0 ? 0 : n] = 1;
    return pmf;
  }
  if (rho <= 0) {
    for (let x = 0; x <= n; x++)
      pmf[x] = Math.exp(logChoose(n, x) + x * Math.log(p) + (n - x) * Math.log1p(-p));
    return pmf;
  }
  // Mean p and correlation rho: α = p(1 − rho)/rho, β = (1 − p)(1 − rho)/rho.
  const scale = (1 - rho) / rho;
  const alpha = p * scale;
  const beta = (1 - p) * scale;
  const logNormaliser = logBeta(alpha, beta);
  for (let x = 0; x <= n; x++)
    pmf[x] = Math.exp(logChoose(n, x) + logBeta(x + alpha, n - x + beta) - logNormaliser);
  return pmf;
}

/**
 * The distribution of the failures summed over independent clusters, cluster k having `sizes[k]`
 * iterations that share a failure probability drawn from Beta(mean p, correlation rho): each
 * cluster's count is beta-binomial (Skellam 1948; Williams 1975) and the sum is their exact
 * convolution. Index x holds P(total = x).
 */
export function betaBinomialSumPmf({
  sizes,
  p,
  rho,
}: {
  sizes: readonly number[];
  p: number;
  rho: number;
}): Float64Array {
  if (!(rho >= 0 && rho < 1)) throw new RangeError(`rho must be in [0, 1), got ${rho}`);
  let total = new Float64Array([1]);
  // Clusters usually share a size: compute each size's distribution once.
  const bySize = new Map<number, Float64Array>();
  for (const size of sizes) {
    if (size === 0) continue;
    let cluster = bySize.get(size);
    if (!cluster) {
      cluster = clusterPmf(size, p, rho);
      bySize.set(size, cluster);
    }
    const next = new Float64Array(total.length + size);
    for (let x = 0; x < total.length; x++) {
      const weight = total[x]!;
      if (weight === 0) continue;
      for (let y = 0; y <= size; y++) next[x + y]! += weight * cluster[y]!;
    }
    total = next;
  }
  return total;
}
