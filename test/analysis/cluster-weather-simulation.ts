import { OUTCOME } from "../../src/analysis/iteration-outcome.ts";
import type { AggregatedRun, ArmAggregate, ArmClusters } from "../../src/analysis/types.ts";

export interface ClusterWeatherOptions {
  random: () => number;
  tests: number;
  clustersPerArm: number;
  iterationsPerCluster: number;
  /** Chance that a cluster is bad (for many tests at once). */
  badClusterShare?: number;
  /** Chance that a bad cluster hurts a given test. */
  badTestShare?: number;
  /** How much a bad cluster multiplies a hurt test's odds of failing. */
  badOdds?: number;
  /** Standard deviation of every test's failure log-odds from cluster to cluster. */
  clusterSpread?: number;
  /** Tests (the first ones) whose failure rate the PR raises by `plantedIncrease` on every PR cluster. */
  planted?: number;
  plantedIncrease?: number;
  /** The planted tests' base failure rate; drawn from the mix like every other test's when absent. */
  plantedBaseRate?: number;
  /** Both arms on the same clusters (same payload): each cluster's weather hits both arms alike. */
  sharedClusters?: boolean;
  /**
   * A crossover (with `sharedClusters`): the PR arm runs after each cluster's upgrade, which makes a
   * `testShare` of the tests fail `odds` times as often (odds) whatever the payload.
   */
  upgrade?: { testShare: number; odds: number };
}

const logit = (p: number) => Math.log(p / (1 - p));
const expit = (x: number) => 1 / (1 + Math.exp(-x));

/** Standard normal draw (Box–Muller). */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Base failure rates as a real suite has them: mostly solid, some flaky, a few very flaky. */
function baseRate(random: () => number): number {
  const draw = random();
  return draw < 0.5 ? 0.002 : draw < 0.75 ? 0.02 : draw < 0.9 ? 0.08 : 0.25;
}

function armAggregate(outcomes: number[]): ArmAggregate {
  const failures = outcomes.filter((bits) => bits === OUTCOME.FAILED).length;
  return {
    runs: outcomes.length,
    passes: outcomes.length - failures,
    failures,
    flakes: 0,
    skips: 0,
    outcomes,
    executions: outcomes.length,
    totalDurationMs: 0,
  };
}

/**
 * A two-arm run with cluster weather: each arm runs on its own clusters, every test's failure
 * rate varies from cluster to cluster (log-odds spread `clusterSpread`), and some clusters are bad
 * for many tests at once. With no planted tests, the arms do not differ at all: every regression
 * called is a false one.
 */
export function simulateClusterWeather({
  random,
  tests,
  clustersPerArm,
  iterationsPerCluster,
  badClusterShare = 0.25,
  badTestShare = 0.5,
  badOdds = 6,
  clusterSpread = 0.8,
  planted = 0,
  plantedIncrease = 0.3,
  plantedBaseRate,
  sharedClusters = false,
  upgrade,
}: ClusterWeatherOptions): { run: AggregatedRun; planted: Set<string>; upgraded: Set<string> } {
  const iterations = clustersPerArm * iterationsPerCluster;
  const layout = (arm: string): ArmClusters => ({
    names: Array.from({ length: clustersPerArm }, (_, k) =>
      sharedClusters ? `cluster-${k}` : `${arm}-cluster-${k}`,
    ),
    ofIteration: Array.from({ length: iterations }, (_, i) => Math.floor(i / iterationsPerCluster)),
    unlabelled: 0,
    conflicting: 0,
  });
  const prBad = Array.from({ length: clustersPerArm }, () => random() < badClusterShare);
  const bad = {
    pr: prBad,
    baseline: sharedClusters
      ? prBad
      : Array.from({ length: clustersPerArm }, () => random() < badClusterShare),
  };
  const plantedNames = new Set<string>();
  const upgradedNames = new Set<string>();
  const run: AggregatedRun = {
    arches: ["amd64"],
    iterations: { pr: iterations, baseline: iterations },
    clusters: { pr: layout("pr"), baseline: layout("baseline") },
    records: 0,
    duplicates: 0,
    tests: Array.from({ length: tests }, (_, index) => {
      const name = `[sig-network] weather ${index}`;
      const isPlanted = index < planted;
      if (isPlanted) plantedNames.add(name);
      const base = logit(isPlanted && plantedBaseRate !== undefined ? plantedBaseRate : baseRate(random));
      // Drawn only with an upgrade, so that the figures without one stay as they were.
      const upgraded = upgrade !== undefined && random() < upgrade.testShare;
      if (upgraded) upgradedNames.add(name);
      // Drawn as the arms run, in the order the cluster-weather figures in docs/analysis.md were drawn.
      const prOffsets: number[] = [];
      const aggregate = (arm: "pr" | "baseline") => {
        const outcomes: number[] = [];
        for (let k = 0; k < clustersPerArm; k++) {
          let offset = prOffsets[k];
          if (arm === "pr" || !sharedClusters) {
            const hurt = bad[arm][k]! && random() < badTestShare;
            offset = clusterSpread * normal(random) + (hurt ? Math.log(badOdds) : 0);
            if (arm === "pr") prOffsets.push(offset);
          }
          let rate = expit(base + offset! + (upgraded && arm === "pr" ? Math.log(upgrade.odds) : 0));
          if (isPlanted && arm === "pr") rate = Math.min(1, rate + plantedIncrease);
          for (let i = 0; i < iterationsPerCluster; i++)
            outcomes.push(random() < rate ? OUTCOME.FAILED : OUTCOME.PASSED);
        }
        return armAggregate(outcomes);
      };
      return {
        name,
        component: "c",
        lifecycle: "blocking" as const,
        pr: aggregate("pr"),
        baseline: aggregate("baseline"),
      };
    }),
  };
  return { run, planted: plantedNames, upgraded: upgradedNames };
}
