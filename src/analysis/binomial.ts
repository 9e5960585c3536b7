import { logChoose } from "./log-factorial.ts";
import { logSumExp } from "./log-sum-exp.ts";

/** P(X ≥ k) for X ~ Binomial(n, p), summed in log space. */
export function binomialUpperTail({ n, k, p }: { n: number; k: number; p: number }): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  const logP = Math.log(p);
  const logQ = Math.log1p(-p);
  const logTerms: number[] = [];
  for (let x = k; x <= n; x++) logTerms.push(logChoose(n, x) + x * logP + (n - x) * logQ);
  return Math.min(1, Math.exp(logSumExp(logTerms)));
}
