import type { DesignCosts, PowerDesign } from "./power-types.ts";

/**
 * What a design costs: clusters brought up and cluster-hours (install plus iterations). Separate
 * clusters install twice as many clusters; shared clusters run both arms' iterations on each;
 * crossover clusters run both arms' iterations too, with an upgrade between them.
 */
export function designCost(
  design: Pick<PowerDesign, "kind" | "clustersPerArm" | "iterationsPerCluster">,
  costs: DesignCosts,
): { clusters: number; clusterHours: number } {
  const bothArms = design.kind !== "separate";
  const clusters = bothArms ? design.clustersPerArm : 2 * design.clustersPerArm;
  const iterationsPerCluster = bothArms ? 2 * design.iterationsPerCluster : design.iterationsPerCluster;
  const upgradeMinutes = design.kind === "crossover" ? (costs.upgradeMinutes ?? 0) : 0;
  const minutes =
    clusters * (costs.installMinutes + upgradeMinutes + iterationsPerCluster * costs.iterationMinutes);
  return { clusters, clusterHours: Math.round((minutes / 60) * 10) / 10 };
}
