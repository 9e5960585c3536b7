// Lanczos approximation (g = 7, n = 9), the coefficients Numerical Recipes and Boost use.
const G = 7;
const COEFFICIENTS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);

/**
 * ln Γ(x) for x > 0, to about 1e-14 relative: the beta-binomial needs it at non-integer
 * arguments, where the factorial table cannot help.
 */
export function logGamma(x: number): number {
  if (!(x > 0)) throw new RangeError(`logGamma needs x > 0, got ${x}`);
  // Γ(x) = Γ(x + 1) / x keeps the series in its accurate range.
  if (x < 0.5) return logGamma(x + 1) - Math.log(x);
  const z = x - 1;
  let sum = COEFFICIENTS[0]!;
  for (let i = 1; i < COEFFICIENTS.length; i++) sum += COEFFICIENTS[i]! / (z + i);
  const t = z + G + 0.5;
  return HALF_LOG_TWO_PI + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}
