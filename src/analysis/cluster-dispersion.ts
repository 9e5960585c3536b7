import type { ClusterCounts } from "./cluster-exact-test.ts";

/**
 * An arm with fewer failed (or passed) iterations than this says too little about dispersion: X²
 * of one or two events is nearly fixed by the cluster sizes, whatever the clusters are like.
 */
const MINIMUM_EVENTS = 3;

/**
 * Pearson's quasi-binomial dispersion of one test between the clusters of each arm (McCullagh &
 * Nelder 1989, §4.5): X² = Σ (f_k − n_k·p̂)² / (n_k·p̂(1 − p̂)) with p̂ the arm's own rate, so a
 * difference between the arms never counts as dispersion — only clusters differing from their
 * arm-mates do. An arm with fewer than three failed (or passed) iterations adds no degrees of
 * freedom. φ = 1 is binomial; a beta-binomial with correlation ρ on clusters of n
 * iterations has φ ≈ 1 + (n − 1)ρ.
 */
export function clusterDispersion(arms: readonly ClusterCounts[]): { phi: number; df: number } {
  let chiSquare = 0;
  let df = 0;
  for (const { runs, failed } of arms) {
    let armRuns = 0;
    let armFailed = 0;
    let clusters = 0;
    runs.forEach((n, k) => {
      if (n === 0) return;
      armRuns += n;
      armFailed += failed[k]!;
      clusters++;
    });
    if (clusters < 2 || armFailed < MINIMUM_EVENTS || armRuns - armFailed < MINIMUM_EVENTS) continue;
    const p = armFailed / armRuns;
    runs.forEach((n, k) => {
      if (n > 0) chiSquare += (failed[k]! - n * p) ** 2 / (n * p * (1 - p));
    });
    df += clusters - 1;
  }
  return { phi: df > 0 ? chiSquare / df : Number.NaN, df };
}
