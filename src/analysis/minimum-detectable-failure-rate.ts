import { binomialUpperTail } from "./binomial.ts";

/**
 * The smallest failure rate p at which `runs` iterations reach `criticalFailures` or more failures
 * with probability `power` — i.e. the regression a test flagged from that many failures on would
 * catch 80% of the time. Bisection on the binomial upper tail, which rises monotonically with p.
 */
export function minimumDetectableFailureRate({
  runs,
  criticalFailures,
  power,
}: {
  runs: number;
  criticalFailures: number;
  power: number;
}): number | null {
  if (criticalFailures > runs) return null;
  let low = 0;
  let high = 1;
  for (let step = 0; step < 60; step++) {
    const middle = (low + high) / 2;
    if (binomialUpperTail({ n: runs, k: criticalFailures, p: middle }) >= power) high = middle;
    else low = middle;
  }
  return high;
}
