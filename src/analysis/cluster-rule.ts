import { clusterDispersion } from "./cluster-dispersion.ts";
import type { ClusterCounts } from "./cluster-exact-test.ts";
import { OUTCOME } from "./iteration-outcome.ts";
import { nullLogDispersionMoments, type LogDispersionMoments } from "./null-dispersion-moments.ts";
import {
  fitDispersionPrior,
  moderatedDispersion,
  type DispersionEstimate,
  type DispersionPrior,
} from "./squeeze-dispersions.ts";
import type { AggregatedRun, ArmAggregate, ArmClusters } from "./types.ts";

export type RuleChoice =
  | { rule: "iteration"; note: string }
  | {
      rule: "cluster";
      note: string;
      clusters: { pr: ArmClusters; baseline: ArmClusters };
      onePerArm: boolean;
    };

export const ONE_CLUSTER_PER_ARM =
  "1 cluster per arm: a failure-rate difference cannot be told apart from the cluster";

/**
 * The cluster rule runs when every record of both arms names its cluster and there is a baseline
 * arm (a pooled history has no clusters); otherwise the iteration rule, and the note says why.
 */
export function chooseRule({
  run,
  baselineKind,
}: {
  run: AggregatedRun;
  baselineKind: "arm" | "history" | "arm+history";
}): RuleChoice {
  const iterationRule = "iteration rule: every iteration counted as an independent draw";
  const clusters = run.clusters;
  if (!clusters || (clusters.pr.names.length === 0 && clusters.baseline.names.length === 0))
    return { rule: "iteration", note: `${iterationRule} (the records name no cluster)` };
  if (baselineKind === "history")
    return { rule: "iteration", note: `${iterationRule} (a pooled history baseline has no clusters)` };
  const unlabelled = clusters.pr.unlabelled + clusters.baseline.unlabelled;
  if (unlabelled > 0)
    return {
      rule: "iteration",
      note: `${iterationRule} (${unlabelled} record(s) name no cluster; the cluster rule needs every one to)`,
    };
  const conflicting = clusters.pr.conflicting + clusters.baseline.conflicting;
  if (conflicting > 0)
    return {
      rule: "iteration",
      note: `${iterationRule} (${conflicting} record(s) name another cluster than the rest of their iteration)`,
    };
  const onePerArm = clusters.pr.names.length <= 1 && clusters.baseline.names.length <= 1;
  const shape = `PR ${clusters.pr.names.length} cluster(s), baseline ${clusters.baseline.names.length}`;
  return {
    rule: "cluster",
    note: onePerArm
      ? `cluster rule (${shape}): ${ONE_CLUSTER_PER_ARM}, so no difference between the arms is judged`
      : `cluster rule (${shape}): iterations grouped by cluster, the dispersion between clusters estimated across tests`,
    clusters,
    onePerArm,
  };
}

/**
 * One test's runs and failed iterations per cluster of an arm. Most tests ran every iteration and
 * many never failed: those share one `runs` array (`full`) and one zero `failed` array, so tens of
 * thousands of tests do not each keep their own.
 */
export function countByCluster(
  aggregate: ArmAggregate | undefined,
  clusters: ArmClusters,
  shared: { full: readonly number[]; zeros: readonly number[] },
): ClusterCounts {
  const runs = new Array<number>(clusters.names.length).fill(0);
  const failed = new Array<number>(clusters.names.length).fill(0);
  let anyFailed = false;
  aggregate?.outcomes.forEach((bits, iteration) => {
    if ((bits & (OUTCOME.PASSED | OUTCOME.FAILED)) === 0) return;
    const cluster = clusters.ofIteration[iteration] ?? -1;
    if (cluster < 0) return;
    runs[cluster]!++;
    if ((bits & OUTCOME.FAILED) !== 0) {
      failed[cluster]!++;
      anyFailed = true;
    }
  });
  const isFull = runs.every((n, k) => n === shared.full[k]);
  return { runs: isFull ? shared.full : runs, failed: anyFailed ? failed : shared.zeros };
}

/** Iterations per cluster of an arm (what a test that ran every iteration has), and zeros. */
export function sharedClusterCounts(clusters: ArmClusters): { full: number[]; zeros: number[] } {
  const full = new Array<number>(clusters.names.length).fill(0);
  for (const cluster of clusters.ofIteration) if (cluster >= 0) full[cluster]!++;
  return { full, zeros: new Array<number>(clusters.names.length).fill(0) };
}

export interface TestDispersion {
  own: DispersionEstimate;
  phi: number;
  rho: number;
}

const nullMomentsCache = new Map<string, LogDispersionMoments | null>();

/** The estimate with its sampling moments under φ = 1, measured once per shape (sizes, rates to 0.01, df). */
function withNullMoments(
  arms: readonly [ClusterCounts, ClusterCounts],
  estimate: { phi: number; df: number },
): DispersionEstimate {
  if (!(estimate.df > 0)) return estimate;
  const sizes = arms.map((arm) => arm.runs.filter((n) => n > 0));
  const rates = arms.map((arm) => {
    const runs = arm.runs.reduce((sum, n) => sum + n, 0);
    const failed = arm.failed.reduce((sum, n) => sum + n, 0);
    return runs > 0 ? Math.round((100 * failed) / runs) / 100 : 0;
  });
  const key = `${sizes.map((arm) => arm.join(",")).join("|")} ${rates.join(",")} ${estimate.df}`;
  let nullMoments = nullMomentsCache.get(key);
  if (nullMoments === undefined) {
    nullMoments = nullLogDispersionMoments({ sizes, rates, df: estimate.df });
    nullMomentsCache.set(key, nullMoments);
  }
  return { ...estimate, nullMoments };
}

/** Fewest tests with an own estimate that a stratum of the trended prior is fitted from. */
const STRATUM_TESTS = 40;
const MAX_STRATA = 6;

/**
 * The prior as a step function of the failure rate (edgeR's trended dispersion, in strata):
 * cluster-to-cluster variation of a failure probability grows with p(1 − p), so a flaky test's
 * clusters differ more than a solid one's, and one prior for all would under-state it for flaky
 * tests. Tests with an estimate are sorted by rate and cut into equal strata of at least
 * STRATUM_TESTS; each stratum gets its own prior, and a test takes the prior of the stratum its
 * rate falls in.
 */
function fitTrendedPrior(
  estimates: readonly (DispersionEstimate & { rate: number })[],
): { upTo: number; prior: DispersionPrior | null }[] {
  const usable = estimates
    .filter(({ df, phi }) => df > 0 && Number.isFinite(phi))
    .sort((a, b) => a.rate - b.rate);
  const strata = Math.max(1, Math.min(MAX_STRATA, Math.floor(usable.length / STRATUM_TESTS)));
  const fitted: { upTo: number; prior: DispersionPrior | null }[] = [];
  for (let stratum = 0; stratum < strata; stratum++) {
    const members = usable.slice(
      Math.floor((stratum * usable.length) / strata),
      Math.floor(((stratum + 1) * usable.length) / strata),
    );
    fitted.push({
      upTo: stratum === strata - 1 ? Infinity : members.at(-1)!.rate,
      prior: fitDispersionPrior(members),
    });
  }
  return fitted;
}

/**
 * Per test: its own between-cluster dispersion, moderated towards the prior fitted across all
 * tests of similar failure rate (empirical Bayes), floored at 1 (clusters can be alike, not more
 * alike than chance), and turned into the beta-binomial correlation ρ = (φ − 1)/(n̄ − 1) for
 * clusters of n̄ iterations.
 */
export function moderateDispersions(tests: readonly (readonly [ClusterCounts, ClusterCounts] | null)[]): {
  prior: DispersionPrior | null;
  dispersions: (TestDispersion | null)[];
  /** The prior's correlation for a test failing at `rate` on clusters of `meanSize`: what a rate to detect would face. */
  rhoAtRate: (rate: number, meanSize: number) => number;
  /** A further test's dispersion against the prior these tests fitted, as if it had been among them (the power planner's planted tests). */
  moderate: (arms: readonly [ClusterCounts, ClusterCounts]) => TestDispersion;
} {
  // Shapes repeat within a run, rarely across runs: measure each once per run.
  nullMomentsCache.clear();
  const shapeOf = (arms: readonly [ClusterCounts, ClusterCounts]) => {
    let runs = 0;
    let failed = 0;
    let clusters = 0;
    for (const arm of arms)
      arm.runs.forEach((n, k) => {
        runs += n;
        failed += arm.failed[k]!;
        if (n > 0) clusters++;
      });
    return {
      ...withNullMoments(arms, clusterDispersion(arms)),
      rate: runs > 0 ? failed / runs : 0,
      meanSize: clusters > 0 ? runs / clusters : 0,
    };
  };
  const shapes = tests.map((arms) => (arms ? shapeOf(arms) : null));
  const present = shapes.filter((shape) => shape !== null);
  const trend = fitTrendedPrior(present);
  const overall = fitDispersionPrior(present);
  const dispersionOf = (shape: ReturnType<typeof shapeOf>): TestDispersion => {
    const prior = (trend.find((stratum) => shape.rate <= stratum.upTo) ?? trend.at(-1))?.prior ?? overall;
    const estimate: DispersionEstimate = {
      phi: shape.phi,
      df: shape.df,
      nullMoments: shape.nullMoments ?? null,
    };
    const phi = Math.max(1, moderatedDispersion({ estimate, prior }));
    const rho = shape.meanSize > 1 ? Math.min(0.99, (phi - 1) / (shape.meanSize - 1)) : 0;
    return { own: estimate, phi, rho };
  };
  const dispersions = shapes.map((shape) => (shape ? dispersionOf(shape) : null));
  const rhoAtRate = (rate: number, meanSize: number) => {
    const prior = (trend.find((stratum) => rate <= stratum.upTo) ?? trend.at(-1))?.prior ?? overall;
    const phi = Math.max(1, prior?.phi ?? 1);
    return meanSize > 1 ? Math.min(0.99, (phi - 1) / (meanSize - 1)) : 0;
  };
  return { prior: overall, dispersions, rhoAtRate, moderate: (arms) => dispersionOf(shapeOf(arms)) };
}
