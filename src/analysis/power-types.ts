import type { AnalysisSettings } from "./types.ts";

/**
 * What the power planner and the decision step know about a run: its design and the cluster weather
 * it is simulated under. Kinds: `separate` — each arm on clusters of its own (payloads differ; today's
 * default); `shared` — both arms interleave on the same clusters (the payloads are the same);
 * `crossover` — each cluster runs the baseline payload, is upgraded and runs the PR payload (an
 * adaptive run whose payloads differ): both arms see that cluster's weather, which it keeps through
 * its upgrade, and each cluster pays an upgrade besides its install.
 */
export type DesignKind = "separate" | "shared" | "crossover";

export interface PowerDesign {
  kind: DesignKind;
  /** Clusters per arm; with `shared` and `crossover`, the clusters both arms use. */
  clustersPerArm: number;
  /** Iterations per cluster and arm. */
  iterationsPerCluster: number;
  /** Tests in the run: how large the family a regression is found in. */
  tests: number;
}

/**
 * The cluster weather of docs/analysis.md ("Simulation: error rate and power under cluster
 * weather"): base rates drawn from a realistic mix, every test's failure log-odds varying from
 * cluster to cluster, and some clusters bad for many tests at once.
 */
export interface WeatherModel {
  baseRates: readonly { rate: number; share: number }[];
  /** Standard deviation of a test's failure log-odds from cluster to cluster. */
  clusterSpread: number;
  /** Chance a cluster is bad. */
  badClusterShare: number;
  /** Chance a bad cluster hurts a given test. */
  badTestShare: number;
  /** How much a bad cluster multiplies a hurt test's odds of failing. */
  badOdds: number;
  /**
   * What upgrading a cluster changes by itself, whatever payload it goes to (a `crossover` cluster's
   * PR half runs after its upgrade; no other design upgrades): the chance a test is one an upgrade
   * makes flakier, and how much it then multiplies that test's odds of failing on every upgraded
   * cluster. The analysis cannot tell this from the PR's effect (docs/analysis.md, "crossover by
   * upgrade"): it counts it as the PR's.
   */
  upgrade: { testShare: number; odds: number };
}

export const ANALYSIS_WEATHER: WeatherModel = {
  baseRates: [
    { rate: 0.002, share: 0.5 },
    { rate: 0.02, share: 0.25 },
    { rate: 0.08, share: 0.15 },
    { rate: 0.25, share: 0.1 },
  ],
  clusterSpread: 0.8,
  badClusterShare: 0.25,
  badTestShare: 0.5,
  badOdds: 6,
  // An assumption, not a measurement: one test in fifty fails four times as often (odds) after any upgrade.
  upgrade: { testShare: 0.02, odds: 4 },
};

/** The test classes a plan states its power for: a clean test, a 2% flake, a 10% flake. */
export const BASE_RATE_CLASSES = [
  { label: "clean", baseRate: 0 },
  { label: "2% flake", baseRate: 0.02 },
  { label: "10% flake", baseRate: 0.1 },
] as const;

/** How the planner simulates and prices a design: the weather, the costs, the seed and how many regressions per point. */
export interface PowerSimulation {
  model: WeatherModel;
  costs: DesignCosts;
  seed: string;
  /** Simulated runs per point, and regressed tests judged in each. */
  rounds?: number;
  copies?: number;
  settings?: AnalysisSettings;
}

/** Minutes a cluster takes to come up, and minutes one iteration of the whole suite takes on it. */
export interface DesignCosts {
  installMinutes: number;
  iterationMinutes: number;
  /** Minutes upgrading a cluster from the baseline payload to the PR payload takes (`crossover` only; none if absent). */
  upgradeMinutes?: number;
}

/**
 * What a design is priced at when nothing else is known: a 45-minute install, 10 minutes an
 * iteration, 30 minutes an upgrade (the adaptive-run simulation's cost model, docs/analysis.md).
 */
export const DEFAULT_DESIGN_COSTS: DesignCosts = {
  installMinutes: 45,
  iterationMinutes: 10,
  upgradeMinutes: 30,
};
