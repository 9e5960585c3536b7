import { designCost } from "./design-cost.ts";
import type { DesignKind, PowerDesign, PowerSimulation } from "./power-types.ts";
import { simulatePower } from "./simulate-power.ts";
import { DEFAULT_ANALYSIS_SETTINGS } from "./types.ts";
import { wilsonInterval } from "./wilson-interval.ts";

/** One-sided 95%: a design is taken when its simulated power is at least the target with this confidence. */
const CONFIDENT_Z = 1.645;

export interface DesignChoice {
  design: PowerDesign;
  power: number;
  /** One-sided 95% lower bound of `power` over the simulated regressions: what the choice is held to. */
  powerLowerBound: number;
  cost: { clusters: number; clusterHours: number };
}

/**
 * The design of the given kind that costs fewest cluster-hours among those whose simulated power to
 * detect `from` → `to` reaches the settings' power — with 95% confidence over the simulated
 * regressions, so that a design at the edge is not taken on a lucky draw. For each iteration count the fewest clusters that
 * do is found by bisection (power grows with clusters); a count whose smallest design already costs
 * more than the best found is skipped. Null when no design up to `maxClusters` per arm does.
 */
export function cheapestDesign({
  from,
  to,
  kind,
  tests,
  iterationChoices = [2, 3, 4, 6, 8, 10, 15, 20],
  maxClusters = 40,
  model,
  costs,
  seed,
  rounds = 6,
  copies = 40,
  settings = DEFAULT_ANALYSIS_SETTINGS,
}: PowerSimulation & {
  from: number;
  to: number;
  kind: DesignKind;
  tests: number;
  iterationChoices?: readonly number[];
  maxClusters?: number;
}): DesignChoice | null {
  const simulate = (design: PowerDesign) =>
    simulatePower({
      design,
      model,
      points: [{ baseRate: from, rise: to - from }],
      rounds,
      copies,
      seed,
      settings,
    }).points[0]!;
  const powerOf = (design: PowerDesign) => {
    const { power, samples } = simulate(design);
    const bound = wilsonInterval({ successes: Math.round(power * samples), trials: samples, z: CONFIDENT_Z });
    return { power, lowerBound: bound!.low };
  };
  const reaches = (design: PowerDesign) => powerOf(design).lowerBound >= settings.power;
  let best: DesignChoice | null = null;
  for (const iterationsPerCluster of iterationChoices) {
    const designOf = (clustersPerArm: number): PowerDesign => ({
      kind,
      clustersPerArm,
      iterationsPerCluster,
      tests,
    });
    if (best && designCost(designOf(2), costs).clusterHours >= best.cost.clusterHours) continue;
    if (!reaches(designOf(maxClusters))) continue;
    let low = 1; // below the power (one cluster per arm judges nothing)
    let high = maxClusters; // reaches it
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (reaches(designOf(middle))) high = middle;
      else low = middle;
    }
    const design = designOf(high);
    const cost = designCost(design, costs);
    if (!best || cost.clusterHours < best.cost.clusterHours) {
      const { power, lowerBound } = powerOf(design);
      best = { design, power, powerLowerBound: lowerBound, cost };
    }
  }
  return best;
}
