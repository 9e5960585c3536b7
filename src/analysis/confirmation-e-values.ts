import { pairedEValues } from "./paired-e-values.ts";

/**
 * A suspect's two e-processes on its confirmation contrasts: per pair of new clusters, one on each
 * payload, neither ever upgraded, X = (PR cluster's failed share) − (baseline cluster's), over the
 * same iterations.
 *
 * - `regression` is a sequential sign test: Π(1 + λ·sign X), a mixture over the same bets as
 *   `pairedEValues`. The two clusters of a pair are drawn from one pool, so if the PR does not raise
 *   the test's failure rate the PR cluster's failure count is no larger in distribution than the
 *   baseline cluster's, and P(X > 0) ≤ P(X < 0): sign X has expectation at most 0 given everything
 *   before the pair, and the product is a test supermartingale (Ville's inequality holds). The
 *   sign drops the size of X, which in an unpaired contrast is mostly the two clusters' weather: a
 *   +30-point rise makes X positive on most pairs but its mean only 0.3, and betting on X itself
 *   grows by at most log(1.3) a pair.
 * - `clean` bets on the size, as a rise is stated in points: Π(1 + λ(rise − X)), as in
 *   `pairedEValues` (X's expectation is the rise over the pool's weather).
 */
export function confirmationEValues({ contrasts, rise }: { contrasts: readonly number[]; rise: number }): {
  regression: number;
  clean: number;
} {
  return {
    regression: pairedEValues({ contrasts: contrasts.map(Math.sign), rise }).regression,
    clean: pairedEValues({ contrasts, rise }).clean,
  };
}
