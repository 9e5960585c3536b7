import type { Analysis, ClusterWeather, TestVerdict } from "../analysis/types.ts";

function armClusters(weather: readonly ClusterWeather[], arm: "pr" | "baseline", count: number): string {
  const bad = weather.filter((cluster) => cluster.arm === arm && cluster.bad);
  const worst = bad.map((cluster) => `${cluster.cluster} ×${cluster.ratio.toFixed(1)}`).join(", ");
  return `${count} cluster(s)${bad.length > 0 ? ` (${bad.length} bad: ${worst})` : ""}`;
}

/**
 * What every report says about the clusters: which rule ran, how many clusters each arm had and
 * how different they were (the dispersion, what it makes an iteration worth, the bad clusters).
 */
export function clusterNotes(analysis: Analysis): string[] {
  const { clusters } = analysis;
  if (!clusters) {
    // Without any cluster label the iteration rule is today's rule; the method says so.
    return analysis.ruleNote.endsWith("(the records name no cluster)") ? [] : [analysis.ruleNote];
  }
  const notes = [analysis.ruleNote];
  const shape = `clusters: PR ${armClusters(clusters.weather, "pr", clusters.counts.pr)}, baseline ${armClusters(clusters.weather, "baseline", clusters.counts.baseline)}`;
  if (clusters.onePerArm) return [...notes, shape];
  const total = clusters.counts.pr + clusters.counts.baseline;
  const perCluster = total > 0 ? (analysis.iterations.pr + analysis.iterations.baseline) / total : 0;
  const phi = clusters.typicalDispersion;
  const worth =
    perCluster > 1
      ? `: ${perCluster.toFixed(perCluster % 1 === 0 ? 0 : 1)} iterations on one cluster count as ≈ ${(perCluster / phi).toFixed(1)} independent ones`
      : "";
  return [
    ...notes,
    `${shape}; between-cluster dispersion φ ≈ ${phi.toFixed(2)} for a typical failing test (1 = clusters alike)${worth}`,
  ];
}

/** Tests worth a note because one cluster carried most of their failures. */
export function dominatedTests(tests: readonly TestVerdict[]): { test: TestVerdict; note: string }[] {
  return tests.flatMap((test) => {
    const dominant = test.clusters?.dominant;
    if (!dominant) return [];
    const arm = dominant.arm === "pr" ? "PR" : "baseline";
    return [
      { test, note: `${dominant.failed} of ${dominant.of} ${arm} failures on cluster ${dominant.cluster}` },
    ];
  });
}
