/** Bets as shares of the largest one that keeps every factor non-negative; their average is the e-process. */
const BET_SHARES = [0.1, 0.25, 0.5, 0.75, 0.9];

/**
 * Two anytime-valid e-processes on a test's per-cluster contrasts X = (PR failed share) − (baseline
 * failed share) on one cluster, each in [−1, 1] and, whatever the cluster's weather, with
 * expectation the PR's rise in failure rate (both arms ran on that cluster).
 *
 * - `regression` tests H0: rise ≤ 0 by betting on X: Π(1 + λX). Under H0 it is a non-negative
 *   supermartingale, so by Ville's inequality it ever reaches 1/α with probability at most α —
 *   however the run stops or goes on.
 * - `clean` tests H0': rise ≥ `rise` by betting on `rise` − X: Π(1 + λ(rise − X)). Reaching 1/β
 *   says the rise is below the target, and a test whose rise is at least the target is called
 *   clean with probability at most β: power 1 − β.
 *
 * Each is a uniform mixture over fixed bets λ (a mixture of e-processes is one), so no bet needs
 * tuning to the unknown variance (Waudby-Smith & Ramdas 2024; Ramdas et al. 2023).
 */
export function pairedEValues({ contrasts, rise }: { contrasts: readonly number[]; rise: number }): {
  regression: number;
  clean: number;
} {
  const mixture = (largest: number, factor: (lambda: number, x: number) => number) => {
    let total = 0;
    for (const share of BET_SHARES) {
      const lambda = share * largest;
      let logWealth = 0;
      for (const x of contrasts) logWealth += Math.log(factor(lambda, x));
      total += Math.exp(logWealth);
    }
    return total / BET_SHARES.length;
  };
  return {
    // X ≥ −1, so λ < 1 keeps 1 + λX > 0.
    regression: mixture(1, (lambda, x) => 1 + lambda * x),
    // rise − X ≥ rise − 1, so λ < 1 / (1 − rise) keeps the factor positive.
    clean: mixture(1 / (1 - rise), (lambda, x) => 1 + lambda * (rise - x)),
  };
}
