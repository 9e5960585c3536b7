import { cheapestDesign } from "./cheapest-design.ts";
import { planPower } from "./plan-power.ts";
import { ANALYSIS_WEATHER, DEFAULT_DESIGN_COSTS, type DesignKind } from "./power-types.ts";

/**
 * Simulated runs per point and regressions judged in each: 40 regressions per point, few enough
 * that planning a run's design takes well under 200 ms of a worker (docs/analysis.md).
 */
const ROUNDS = 2;
const COPIES = 20;
export const RUN_POWER_SEED = "netstress-run-power";

/**
 * A run's design as the planner sees it. `adaptive`: batches until decided, on the clusters
 * `batchesOn` says, whose fixed-sample figures are those of its budget run as a fixed run of that
 * design (`clustersPerArm` × `iterationsPerCluster`).
 */
export interface RunDesign {
  kind: DesignKind | "adaptive";
  /**
   * adaptive: the design its batches run — `shared` clusters (both arms on one payload) or
   * `crossover` by upgrade (payloads differ); absent in records planned before it was said: shared.
   */
  batchesOn?: "shared" | "crossover";
  clustersPerArm: number;
  iterationsPerCluster: number;
  tests: number;
  /** The plan did not list its tests: `tests` is the planner's assumption, not the run's count. */
  testsAssumed: boolean;
  /** adaptive: the run's budget, `<N> iterations`. */
  budgetIterations?: number;
  /** A fixed run asked for as adaptive (mode: adaptive): why it cannot go in batches. */
  adaptiveAsFixed?: string;
}

export interface RunPower {
  design: RunDesign;
  /** Per test class, the smallest rise (absolute points) flagged with 80% power; null: none up to 100%. */
  detectable: { label: string; baseRate: number; rise: number | null }[];
  cost: { clusters: number; clusterHours: number };
  target: { from: number; to: number };
  /**
   * Fixed runs: the fewest clusters per arm at the run's iterations per cluster that see the target
   * with 80% power; null when none up to `maxClustersPerArm` does. Absent for adaptive runs, which
   * decide the target themselves.
   */
  need?: {
    clustersPerArm: number;
    iterationsPerCluster: number;
    clusters: number;
    clusterHours: number;
  } | null;
  maxClustersPerArm: number;
  simulation: { seed: string; regressionsPerPoint: number };
}

/**
 * What a run's design can see, for its check run or gate: `planPower`'s smallest detectable rise
 * per test class, and for a fixed run what the target needs at the run's iterations per cluster
 * (`cheapestDesign` on clusters up to what a run may ask for). Seeded and bounded: the same design
 * and target always give the same figures.
 */
export function runDesignPower({
  design,
  target,
  maxClustersPerArm,
}: {
  design: RunDesign;
  target: { from: number; to: number };
  maxClustersPerArm: number;
}): RunPower {
  const kind: DesignKind = design.kind === "adaptive" ? (design.batchesOn ?? "shared") : design.kind;
  const simulation = { model: ANALYSIS_WEATHER, costs: DEFAULT_DESIGN_COSTS, seed: RUN_POWER_SEED };
  const plan = planPower({
    ...simulation,
    design: {
      kind,
      clustersPerArm: design.clustersPerArm,
      iterationsPerCluster: design.iterationsPerCluster,
      tests: design.tests,
    },
    rounds: ROUNDS,
    copies: COPIES,
  });
  const choice =
    design.kind === "adaptive"
      ? undefined
      : cheapestDesign({
          ...simulation,
          ...target,
          kind,
          tests: design.tests,
          iterationChoices: [design.iterationsPerCluster],
          maxClusters: maxClustersPerArm,
          rounds: ROUNDS,
          copies: COPIES,
        });
  return {
    design,
    detectable: plan.classes.map(({ label, baseRate, detectableRise }) => ({
      label,
      baseRate,
      rise: detectableRise,
    })),
    cost: plan.cost,
    target,
    ...(choice === undefined
      ? {}
      : {
          need: choice && {
            clustersPerArm: choice.design.clustersPerArm,
            iterationsPerCluster: choice.design.iterationsPerCluster,
            ...choice.cost,
          },
        }),
    maxClustersPerArm,
    simulation: { seed: RUN_POWER_SEED, regressionsPerPoint: ROUNDS * COPIES },
  };
}
