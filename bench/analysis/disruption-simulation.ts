import { compareDisruption } from "../../src/analysis/disruption-compare.ts";
import type { DisruptionSample } from "../../src/analysis/disruption-types.ts";
import type { AggregatedRun, ArmAggregate } from "../../src/analysis/types.ts";
import type { Disruption } from "@netstress/core/model/disruption-schema.ts";
import { NETWORK_PATHS } from "@netstress/core/model/network-paths.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";

/**
 * False alarms and power of the disruption comparison on simulated data that looks like reality:
 * most iterations see no disruption at all; now and then a path fails for a few seconds (heavy
 * tailed: lognormal, sometimes a minute); some iterations carry an event that hits every path at
 * once; and clusters have weather — each its own rate, a fifth of them stormy (5× the events,
 * twice as long). One run: 12 rows (6 paths × new/reused) of one test per arm, each arm on its own
 * clusters, compared as analyzeRun does (clusters as units when the records name them).
 * Usage: node --import tsx bench/analysis/disruption-simulation.ts [RUNS] [SCENARIO…]
 * A scenario is JSON of Scenario overrides, e.g. '{"clustersPerArm":3,"iterationsPerCluster":10}'.
 */
interface Scenario {
  clustersPerArm: number;
  /** PR clusters, when not clustersPerArm. */
  prClusters?: number;
  iterationsPerCluster: number;
  /** Whether the records name their cluster (else every iteration is a unit). */
  labelled: boolean;
  /** Share of stormy clusters; 0 and spread 0 is a world without weather. */
  stormy: number;
  /** σ of the per-cluster log-rate. */
  spread: number;
  /** Added to PR iterations of the planted rows: seconds, and the share of iterations it hits. */
  shiftSeconds: number;
  shiftShare: number;
  /** How many rows carry the shift (pod-to-pod-cross-node new, reused, then the next paths). */
  plantedRows: number;
}

const DEFAULTS: Scenario = {
  clustersPerArm: 3,
  iterationsPerCluster: 10,
  labelled: true,
  stormy: 0.2,
  spread: 0.7,
  shiftSeconds: 0,
  shiftShare: 1,
  plantedRows: 0,
};

const [runsArgument = "1000", ...scenarioArguments] = process.argv.slice(2);
const runs = Number(runsArgument);
const scenarios: Partial<Scenario>[] =
  scenarioArguments.length > 0
    ? scenarioArguments.map((text) => JSON.parse(text) as Partial<Scenario>)
    : [
        {},
        { clustersPerArm: 2 },
        { clustersPerArm: 5, iterationsPerCluster: 6 },
        { prClusters: 1, clustersPerArm: 3 },
        { stormy: 0.4, spread: 1.2 },
        { stormy: 0, spread: 0 },
        { labelled: false },
        { labelled: false, stormy: 0, spread: 0 },
        { shiftSeconds: 2, plantedRows: 2 },
        { shiftSeconds: 2, plantedRows: 2, clustersPerArm: 2 },
        { shiftSeconds: 2, plantedRows: 2, clustersPerArm: 5, iterationsPerCluster: 6 },
        { shiftSeconds: 2, plantedRows: 1 },
        { shiftSeconds: 2, plantedRows: 2, shiftShare: 0.5 },
        { shiftSeconds: 5, plantedRows: 2, shiftShare: 0.3 },
        { shiftSeconds: 2, plantedRows: 2, stormy: 0.4, spread: 1.2 },
        { shiftSeconds: 2, plantedRows: 2, labelled: false, stormy: 0, spread: 0 },
      ];

const ROWS = NETWORK_PATHS.flatMap((path) =>
  (["new", "reused"] as const).map((connection) => ({ path, connection })),
);
// pod-to-pod-cross-node first: that is where the PR agent's restart bug shows.
const PLANT_ORDER = [2, 3, 0, 1, 4, 5, 6, 7, 8, 9, 10, 11];

function simulateArm(
  random: () => number,
  scenario: Scenario,
  arm: "pr" | "baseline",
  clusters: number,
): ArmAggregate {
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const spike = (scale: number) => Math.min(120, Math.ceil(scale * Math.exp(0.7 + normal())));
  const samples: DisruptionSample[] = [];
  let iteration = 0;
  for (let c = 0; c < clusters; c++) {
    const stormy = random() < scenario.stormy;
    const rate = Math.exp(scenario.spread * normal() - scenario.spread ** 2 / 2) * (stormy ? 5 : 1);
    const scale = stormy ? 2 : 1;
    for (let k = 0; k < scenario.iterationsPerCluster; k++, iteration++) {
      // An event that hits every path at once (a node reboot, an API server hiccup).
      const event = random() < Math.min(0.9, 0.04 * rate) ? spike(scale) : 0;
      const shifted = arm === "pr" && random() < scenario.shiftShare;
      const entries: Disruption[] = ROWS.map(({ path, connection }, row) => {
        const own = random() < Math.min(0.9, 0.04 * rate) ? spike(scale) : 0;
        const planted =
          shifted && PLANT_ORDER.indexOf(row) < scenario.plantedRows ? scenario.shiftSeconds : 0;
        const disrupted = Math.min(60, event + own + planted);
        return {
          path,
          connection,
          observedSeconds: 60,
          disruptedSeconds: disrupted,
          budgetSeconds: 5,
          intervals: [],
        };
      });
      samples.push({
        iteration,
        attempt: 0,
        ...(scenario.labelled ? { cluster: `${arm}-${c}` } : {}),
        result: "passed",
        entries,
      });
    }
  }
  return {
    runs: samples.length,
    passes: samples.length,
    failures: 0,
    flakes: 0,
    skips: 0,
    outcomes: [],
    executions: samples.length,
    totalDurationMs: 0,
    disruption: samples,
  };
}

console.log(
  "| scenario | runs | rows flagged (planted / null) | runs with a false alarm | median detectable shift (null rows) |",
);
console.log("| --- | --- | --- | --- | --- |");
for (const overrides of scenarios) {
  const scenario = { ...DEFAULTS, ...overrides };
  const random = seededRandom(`bench-disruption ${JSON.stringify(overrides)}`);
  let plantedFlagged = 0;
  let nullFlagged = 0;
  let falseAlarmRuns = 0;
  const detectable: number[] = [];
  let undetectable = 0;
  const started = performance.now();
  for (let r = 0; r < runs; r++) {
    const run: AggregatedRun = {
      arches: ["amd64"],
      iterations: { pr: 0, baseline: 0 },
      tests: [
        {
          name: "[sig-network][Disruptive][Serial] node agent restart",
          component: "netstress",
          lifecycle: "blocking",
          pr: simulateArm(random, scenario, "pr", scenario.prClusters ?? scenario.clustersPerArm),
          baseline: simulateArm(random, scenario, "baseline", scenario.clustersPerArm),
        },
      ],
      records: 0,
      duplicates: 0,
    };
    const analysis = compareDisruption({ run, unit: scenario.labelled ? "cluster" : "iteration" })!;
    let falseAlarm = false;
    analysis.rows.forEach((row, index) => {
      const planted = PLANT_ORDER.indexOf(index) < scenario.plantedRows && scenario.shiftSeconds > 0;
      if (row.verdict === "regression") {
        if (planted) plantedFlagged++;
        else {
          nullFlagged++;
          falseAlarm = true;
        }
      } else if (!planted) {
        if (row.minDetectableShiftSeconds === null) undetectable++;
        else detectable.push(row.minDetectableShiftSeconds);
      }
    });
    if (falseAlarm) falseAlarmRuns++;
  }
  detectable.sort((a, b) => a - b);
  const nullRows = runs * (ROWS.length - scenario.plantedRows);
  const plantedRows = runs * scenario.plantedRows;
  const share = (n: number, of: number) => (of === 0 ? "–" : `${((100 * n) / of).toFixed(1)}%`);
  const median = detectable.length > 0 ? `${detectable[Math.floor(detectable.length / 2)]} s` : "–";
  console.log(
    `| ${JSON.stringify(overrides)} | ${runs} | ${share(plantedFlagged, plantedRows)} / ${share(nullFlagged, nullRows)} | ${share(falseAlarmRuns, runs)} | ${median}${undetectable > 0 ? ` (${share(undetectable, nullRows)} none)` : ""} |`,
  );
  console.error(`  ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
