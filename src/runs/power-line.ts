import type { RunPower } from "../analysis/run-design-power.ts";

const percent = (value: number) => `${Math.round(value * 1000) / 10}%`;
const points = (value: number) => `+${Math.round(value * 1000) / 10} points`;

/**
 * The power planner's answer for a run in one line, for its check run and gate: what its design can
 * see with 80% power, and what the target (`target`, P0:P1) needs; for a run asked for as adaptive
 * that runs as a fixed run, why first.
 */
export function powerLine(power: RunPower): string {
  const { design, target } = power;
  const change = `${percent(target.from)} → ${percent(target.to)}`;
  const tests = `${design.tests} tests${design.testsAssumed ? " assumed, as the plan lists none" : ""}`;
  const seen = power.detectable
    .map(
      ({ label, rise }) =>
        `${rise === null ? "no rise up to 100%" : points(rise)} on a ${label}${label === "clean" ? " test" : ""}`,
    )
    .join(", ");
  const simulated = `simulated under the analysis' cluster weather, ${power.simulation.regressionsPerPoint} regressions per point, seed "${power.simulation.seed}"`;
  if (design.kind === "adaptive") {
    const [batches, asFixed] =
      design.batchesOn === "crossover"
        ? [
            `adaptive: crossover by upgrade, each cluster running the baseline payload, then upgraded to the PR payload, ${tests}`,
            `spent as a fixed crossover run (${design.clustersPerArm} clusters × ${design.iterationsPerCluster} iterations per arm, installs and upgrades included)`,
          ]
        : [
            `adaptive: batches on ${design.clustersPerArm} shared clusters, ${tests}`,
            `spent as a fixed run of ${design.iterationsPerCluster} iterations per arm on each of those clusters`,
          ];
    return (
      `This run can see ${change} with 80% power in every test it decides within its budget of ${design.budgetIterations} iterations ` +
      `(${batches}); ` +
      `for ${change} you need every test decided before the budget is spent (one left undecided offers Run until decided); ` +
      `${asFixed}, the budget would see ${seen} (${simulated}).`
    );
  }
  const need = power.need
    ? `${power.need.clustersPerArm} clusters × ${power.need.iterationsPerCluster} iterations per arm (${power.need.clusterHours} cluster-hours on ${power.need.clusters} clusters)`
    : `more than ${power.maxClustersPerArm} clusters per arm at ${design.iterationsPerCluster} iterations each, ${power.maxClustersPerArm} being the most a run may ask for`;
  const asFixed = design.adaptiveAsFixed
    ? `mode: adaptive runs as a fixed run here: ${design.adaptiveAsFixed}. `
    : "";
  return (
    `${asFixed}This run can see ${seen} with 80% power ` +
    `(${design.clustersPerArm} clusters × ${design.iterationsPerCluster} iterations per arm, ${design.kind} clusters, ${tests}); ` +
    `for ${change} you need ${need} (${simulated}).`
  );
}
