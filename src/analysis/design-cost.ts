import type { DesignCosts, PowerDesign } from "./power-types.ts";

/**
 * What a design costs: clusters brought up and cluster-hours (install plus iterations). Separate
 * clusters install twice as many clusters; shared clusters run both arms' iterations on each.
 */
export function designCost(
  design: Pick<PowerDesign, "kind" | "clustersPerArm" | "iterationsPerCluster">,
  costs: DesignCosts,
): { clusters: number; clusterHours: number } {
  const clusters = design.kind === "shared" ? design.clustersPerArm : 2 * design.clustersPerArm;
  const iterationsPerCluster =
    design.kind === "shared" ? 2 * design.iterationsPerCluster : design.iterationsPerCluster;
  const minutes = clusters * (costs.installMinutes + iterationsPerCluster * costs.iterationMinutes);
  return { clusters, clusterHours: Math.round((minutes / 60) * 10) / 10 };
}
