import { logFactorial } from "./log-factorial.ts";
import { logSumExp } from "./log-sum-exp.ts";

/** P(X ≥ k) for X ~ Poisson(mean), summed in log space until the terms stop mattering. */
export function poissonUpperTail({ k, mean }: { k: number; mean: number }): number {
  if (k <= 0) return 1;
  if (mean <= 0) return 0;
  const logMean = Math.log(mean);
  const logTerms: number[] = [];
  const last = Math.max(k, Math.ceil(mean)) + 40 + Math.ceil(12 * Math.sqrt(mean));
  for (let x = k; x <= last; x++) logTerms.push(x * logMean - mean - logFactorial(x));
  return Math.min(1, Math.exp(logSumExp(logTerms)));
}
