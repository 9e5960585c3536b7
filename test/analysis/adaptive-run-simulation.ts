import { decideBatch, type DecideInput, type Decision } from "../../src/analysis/decide-batch.ts";
import type { DecideHistoryPayload, DecideRecord } from "../../src/analysis/decide-records.ts";
import type { DecideState } from "../../src/analysis/decide-state.ts";

export interface AdaptiveRunOptions {
  random: () => number;
  tests: number;
  payloads: "same" | "differ";
  target: { from: number; to: number };
  costs: { cluster: number; upgrade: number };
  budget: number;
  /** Tests (the first ones) whose failure rate the PR raises by `plantedIncrease` on every cluster. */
  planted?: number;
  plantedIncrease?: number;
  /** The planted tests' base failure rate; drawn from the mix when absent. */
  plantedBaseRate?: number;
  /** Base failure rates of the other tests, drawn per test; the analysis' mix when absent. */
  baseRate?: (random: () => number) => number;
  badClusterShare?: number;
  badTestShare?: number;
  badOdds?: number;
  clusterSpread?: number;
  /** Log-odds a test's failure rate moves by on a cluster once it is upgraded (crossover only). */
  upgradeEffect?: number;
  /** The share of tests (drawn per test) the upgrade changes; every test when absent. */
  upgradeShare?: number;
  /** Called with each batch asked for, before it runs. */
  onBatch?: (next: NonNullable<Decision["next"]>, history: readonly (readonly DecideRecord[])[]) => void;
  /** Called with every decision the run makes, the last included. */
  onDecision?: (decision: Decision) => void;
  /** Turns a batch's records into what the decision step reads (skips, retries, other tests' records). */
  alter?: (records: DecideRecord[]) => DecideRecord[];
  /** What becomes of the state between batches (a bot writes it in the run record and reads it back). */
  carry?: (state: DecideState) => DecideState;
  /**
   * Payloads of the baseline's history given to the decision step (payloads differ only): each run
   * on 3 clusters of its own × 10 iterations, with the baseline's rates and the same weather.
   */
  historyPayloads?: number;
  /** Ends the run after this many batches, decided or not (a benchmark's cut). */
  maxBatches?: number;
  /** Crossover: the most clusters held at once (`DecideInput.atOnce`). */
  atOnce?: number;
}

const logit = (p: number) => Math.log(p / (1 - p));
const expit = (x: number) => 1 / (1 + Math.exp(-x));
const normal = (random: () => number) =>
  Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const analysisMix = (random: () => number) => {
  const draw = random();
  return draw < 0.5 ? 0.002 : draw < 0.75 ? 0.02 : draw < 0.9 ? 0.08 : 0.25;
};

/**
 * An adaptive run driven by `decideBatch` until it stops, on clusters with the weather of the
 * cluster simulation: each cluster is bad with some chance (odds of failing × `badOdds` for a share
 * of the tests), and every test's failure log-odds differs from cluster to cluster. A cluster keeps
 * its weather for its life, upgrade included. Returns the last decision and what the run did.
 */
export function simulateAdaptiveRun({
  random,
  tests,
  payloads,
  target,
  costs,
  budget,
  planted = 0,
  plantedIncrease = 0.3,
  plantedBaseRate,
  baseRate = analysisMix,
  badClusterShare = 0.25,
  badTestShare = 0.5,
  badOdds = 6,
  atOnce,
  clusterSpread = 0.8,
  upgradeEffect = 0,
  upgradeShare = 1,
  onBatch,
  onDecision,
  alter = (records) => records,
  maxBatches = Infinity,
  carry = (state) => state,
  historyPayloads = 0,
}: AdaptiveRunOptions): { decision: Decision; batches: number; planted: Set<string>; executions: number } {
  const names = Array.from({ length: tests }, (_, index) => `[sig-network] adaptive ${index}`);
  const plantedNames = new Set(names.slice(0, planted));
  const upgradeChanges = names.map(() => upgradeShare >= 1 || random() < upgradeShare);
  const ranBaseline = new Set<string>();
  const base = names.map((_, index) =>
    logit(index < planted && plantedBaseRate !== undefined ? plantedBaseRate : baseRate(random)),
  );
  const weather = new Map<string, { bad: boolean; offsets: Map<number, number> }>();
  const offset = (cluster: string, test: number) => {
    let entry = weather.get(cluster);
    if (!entry) weather.set(cluster, (entry = { bad: random() < badClusterShare, offsets: new Map() }));
    let value = entry.offsets.get(test);
    if (value === undefined) {
      const hurt = entry.bad && random() < badTestShare;
      value = clusterSpread * normal(random) + (hurt ? Math.log(badOdds) : 0);
      entry.offsets.set(test, value);
    }
    return value;
  };
  const history: DecideHistoryPayload[] = Array.from({ length: historyPayloads }, (_, payload) => ({
    tests: Object.fromEntries(
      names.map((name, test) => {
        let failures = 0;
        for (let cluster = 0; cluster < 3; cluster++) {
          const rate = expit(base[test]! + offset(`history-${payload}-${cluster}`, test));
          for (let iteration = 0; iteration < 10; iteration++) if (random() < rate) failures++;
        }
        return [name, { executions: 30, failures, flakes: 0 }];
      }),
    ),
  }));
  const batches: DecideRecord[][] = [];
  const input: DecideInput = {
    tests: names,
    target,
    payloads,
    costs,
    budget,
    ...(history.length > 0 ? { history } : {}),
    ...(atOnce !== undefined ? { atOnce } : {}),
  };
  let executions = 0;
  let state: DecideState | undefined;
  for (;;) {
    const step = decideBatch({ ...input, ...(state ? { state } : {}), batches: batches.slice(-1) });
    const decision = step.decision;
    state = carry(step.state);
    onDecision?.(decision);
    if (!decision.next || batches.length >= maxBatches)
      return { decision, batches: batches.length, planted: plantedNames, executions };
    onBatch?.(decision.next, batches);
    const records: DecideRecord[] = [];
    const { tests: run, iterations, clusters } = decision.next;
    for (const arm of ["pr", "baseline"] as const)
      for (const cluster of clusters[arm])
        for (const name of run) {
          const test = names.indexOf(name);
          let logOdds = base[test]! + offset(cluster, test);
          // Only a cluster that ran the baseline payload before was upgraded to the PR's.
          if (arm === "pr" && payloads === "differ" && ranBaseline.has(cluster) && upgradeChanges[test])
            logOdds += upgradeEffect;
          let rate = expit(logOdds);
          if (arm === "pr" && plantedNames.has(name)) rate = Math.min(1, rate + plantedIncrease);
          for (let iteration = 0; iteration < iterations; iteration++)
            records.push({ arm, cluster, iteration, name, result: random() < rate ? "failed" : "passed" });
        }
    for (const cluster of clusters.baseline) ranBaseline.add(cluster);
    const altered = alter(records);
    executions += altered.length;
    batches.push(altered);
  }
}
