import { cheapestDesign } from "../../src/analysis/cheapest-design.ts";
import { ANALYSIS_WEATHER } from "../../src/analysis/power-types.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulateAdaptiveRun } from "../../test/analysis/adaptive-run-simulation.ts";

/**
 * Adaptive runs (`decideBatch` after every batch, until every test is decided or the budget is
 * spent) under the cluster weather of the analysis (a quarter of clusters bad, log-odds spread 0.8),
 * TESTS tests of the analysis' mix of base rates, beside the cheapest fixed separate-clusters design
 * the power planner finds for the same change. Seeded.
 * Usage: node --import tsx bench/analysis/adaptive-simulation.ts [DATASETS] [TESTS] [SCENARIO…]
 * SCENARIO: null-same, null-differ, null-differ-upgrade, plus30-same, plus30-differ,
 * plus30-differ-upgrade, null-differ-history, plus30-differ-history, null-differ-upgrade-history,
 * plus30-differ-upgrade-history, 2to10-same, 2to10-differ, fixed-plus30, fixed-2to10. The -upgrade
 * ones: the upgrade itself makes a tenth of the tests 4× as likely to fail (odds) on every cluster it
 * moves.
 */
const [datasetsArgument = "20", testsArgument = "500", ...chosen] = process.argv.slice(2);
const datasets = Number(datasetsArgument);
const tests = Number(testsArgument);
// Cost model: an iteration of the whole suite takes 10 minutes, a cluster 45 minutes to install and
// an upgrade 30; in test executions (the decision step's unit) one execution is 10/TESTS minutes.
const minutes = { install: 45, iteration: 10, upgrade: 30 };
const perExecution = minutes.iteration / tests;
const costs = {
  cluster: Math.round(minutes.install / perExecution),
  upgrade: Math.round(minutes.upgrade / perExecution),
};
const budget = 400 * costs.cluster;
const PLANTED = 10;
/** The stream's history given with --history: 30 payloads, each 3 clusters × 10 iterations. */
const HISTORY_PAYLOADS = 30;

function adaptive(
  name: string,
  payloads: "same" | "differ",
  target: { from: number; to: number },
  planted: number,
  historyPayloads = 0,
  upgrade?: { effect: number; share: number },
) {
  const random = seededRandom(`bench-adaptive ${name}`);
  let falseDatasets = 0;
  let found = 0;
  let hours = 0;
  let decided = 0;
  let executions = 0;
  let batches = 0;
  const started = performance.now();
  for (let dataset = 0; dataset < datasets; dataset++) {
    const run = simulateAdaptiveRun({
      random,
      tests,
      payloads,
      target,
      costs,
      budget,
      planted,
      plantedIncrease: target.to - target.from,
      plantedBaseRate: target.from,
      historyPayloads,
      ...(upgrade ? { upgradeEffect: upgrade.effect, upgradeShare: upgrade.share } : {}),
    });
    const regressions = run.decision.tests.filter((test) => test.decision === "regression");
    if (regressions.some((test) => !run.planted.has(test.name))) falseDatasets++;
    found += regressions.filter((test) => run.planted.has(test.name)).length;
    if (run.decision.stopped === "all tests decided") decided++;
    executions += run.executions;
    batches += run.batches;
    // Everything the run spent, in cluster-hours: installs, upgrades, and the executions.
    hours += (run.decision.spent * perExecution) / 60;
  }
  const power = planted > 0 ? `, power ${((100 * found) / (datasets * planted)).toFixed(1)}%` : "";
  console.log(
    `${name}: ${datasets} runs × ${tests} tests, payloads ${payloads}${historyPayloads > 0 ? ` with ${historyPayloads} history payloads` : ""}, target ${target.from}:${target.to}: ` +
      `false-regression runs ${((100 * falseDatasets) / datasets).toFixed(1)}%${power}, ` +
      `all decided in ${decided}/${datasets}, mean ${(hours / datasets).toFixed(1)} cluster-hours ` +
      `(${Math.round(executions / datasets)} executions), ${(batches / datasets).toFixed(1)} batches ` +
      `(${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
}

function fixed(name: string, target: { from: number; to: number }) {
  const started = performance.now();
  const choice = cheapestDesign({
    ...target,
    kind: "separate",
    tests,
    model: ANALYSIS_WEATHER,
    costs: { installMinutes: minutes.install, iterationMinutes: minutes.iteration },
    seed: `bench-adaptive ${name}`,
    rounds: 4,
    maxClusters: 60,
  });
  console.log(
    `${name}: cheapest fixed separate-clusters design for ${target.from}:${target.to} among ${tests} tests: ` +
      (choice
        ? `${choice.design.clustersPerArm} clusters × ${choice.design.iterationsPerCluster} iterations per arm, ` +
          `${choice.cost.clusterHours} cluster-hours, simulated power ${(100 * choice.power).toFixed(1)}% (lower bound ${(100 * choice.powerLowerBound).toFixed(1)}%)`
        : "none up to 60 clusters per arm") +
      ` (${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
}

const PLUS_30 = { from: 0.02, to: 0.32 };
const TWO_TO_TEN = { from: 0.02, to: 0.1 };
/** An upgrade that makes a tenth of the tests 4× as likely to fail (odds), whatever the PR did. */
const UPGRADE = { effect: Math.log(4), share: 0.1 };
const scenarios: Record<string, () => void> = {
  "null-same": () => adaptive("null-same", "same", PLUS_30, 0),
  "null-differ": () => adaptive("null-differ", "differ", PLUS_30, 0),
  "plus30-same": () => adaptive("plus30-same", "same", PLUS_30, PLANTED),
  "plus30-differ": () => adaptive("plus30-differ", "differ", PLUS_30, PLANTED),
  "null-differ-upgrade": () => adaptive("null-differ-upgrade", "differ", PLUS_30, 0, 0, UPGRADE),
  "plus30-differ-upgrade": () => adaptive("plus30-differ-upgrade", "differ", PLUS_30, PLANTED, 0, UPGRADE),
  "null-differ-history": () => adaptive("null-differ-history", "differ", PLUS_30, 0, HISTORY_PAYLOADS),
  "plus30-differ-history": () =>
    adaptive("plus30-differ-history", "differ", PLUS_30, PLANTED, HISTORY_PAYLOADS),
  "null-differ-upgrade-history": () =>
    adaptive("null-differ-upgrade-history", "differ", PLUS_30, 0, HISTORY_PAYLOADS, UPGRADE),
  "plus30-differ-upgrade-history": () =>
    adaptive("plus30-differ-upgrade-history", "differ", PLUS_30, PLANTED, HISTORY_PAYLOADS, UPGRADE),
  "2to10-same": () => adaptive("2to10-same", "same", TWO_TO_TEN, PLANTED),
  "2to10-differ": () => adaptive("2to10-differ", "differ", TWO_TO_TEN, PLANTED),
  "fixed-plus30": () => fixed("fixed-plus30", PLUS_30),
  "fixed-2to10": () => fixed("fixed-2to10", TWO_TO_TEN),
};
for (const name of chosen.length > 0 ? chosen : Object.keys(scenarios)) {
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`unknown scenario ${name}; one of ${Object.keys(scenarios).join(", ")}`);
  scenario();
}
