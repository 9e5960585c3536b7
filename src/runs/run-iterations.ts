/** A run's iterations: an upgrade run upgrades each cluster under test once, so at most one per cluster. */
export function runIterations(options: {
  iterations: number;
  upgradeFrom: string | undefined;
  clusters: number;
}): number {
  return options.upgradeFrom ? Math.min(options.iterations, options.clusters) : options.iterations;
}
