import { scanFirstBadPayloads } from "../../src/analysis/first-bad-payload.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import {
  simulatePayloadHistory,
  testName,
  type PayloadHistoryOptions,
} from "../../test/analysis/payload-history-simulation.ts";

/**
 * The first-bad-payload simulation of test/analysis/first-bad-payload.test.ts at a larger scale:
 * null histories (flaky tests, cluster weather, no change) and planted regressions of several sizes,
 * each planted at a random payload between the 6th and the 25th of 30.
 * Usage: node --import tsx bench/analysis/first-bad-payload-simulation.ts [DATASETS] [TESTS] [SCENARIO…]
 * A scenario is JSON of PayloadHistoryOptions overrides, e.g. '{"planted":10,"plantedIncrease":0.1}'.
 */
const [datasetsArgument = "500", testsArgument = "500", ...scenarioArguments] = process.argv.slice(2);
const datasets = Number(datasetsArgument);
const tests = Number(testsArgument);
const scenarios: Partial<PayloadHistoryOptions>[] =
  scenarioArguments.length > 0
    ? scenarioArguments.map((text) => JSON.parse(text) as Partial<PayloadHistoryOptions>)
    : [
        {},
        { badOdds: 15, clusterSpread: 1.2 },
        { clustersPerPayload: 1, iterationsPerCluster: 30 },
        { clustersPerPayload: 6, iterationsPerCluster: 5 },
        { payloads: 12 },
        { clusterSpread: 0, badClusterShare: 0 },
        { planted: 10, plantedIncrease: 0.05 },
        { planted: 10, plantedIncrease: 0.1 },
        { planted: 10, plantedIncrease: 0.2 },
        { planted: 10, plantedIncrease: 0.3 },
        { planted: 10, plantedIncrease: 0.2, badOdds: 15, clusterSpread: 1.2 },
      ];

const percent = (part: number, whole: number) =>
  whole === 0 ? "—" : `${((100 * part) / whole).toFixed(1)}%`;
console.log(
  `${datasets} datasets × ${tests} tests per scenario; 3 clusters × 10 iterations per payload unless stated`,
);
console.log(
  "| scenario | false datasets | power | at the right payload (±1) | false share of flagged | ms per history |",
);
console.log("| --- | --- | --- | --- | --- | --- |");
for (const scenario of scenarios) {
  const random = seededRandom(`first-bad-payload bench ${JSON.stringify(scenario)}`);
  const payloads = scenario.payloads ?? 30;
  let falseDatasets = 0;
  let falseFindings = 0;
  let found = 0;
  let right = 0;
  let near = 0;
  let planted = 0;
  const start = performance.now();
  for (let d = 0; d < datasets; d++) {
    const plantedAt = Math.min(payloads - 2, 5 + Math.floor(random() * (payloads - 10)));
    const history = simulatePayloadHistory({
      random,
      tests,
      payloads,
      clustersPerPayload: 3,
      iterationsPerCluster: 10,
      plantedAt,
      ...scenario,
    });
    const plantedTests = new Set(Array.from({ length: scenario.planted ?? 0 }, (_, i) => testName(i)));
    planted += plantedTests.size;
    let wrong = 0;
    for (const finding of scanFirstBadPayloads({ history }).findings) {
      if (!plantedTests.has(finding.test)) wrong++;
      else {
        found++;
        if (finding.index === plantedAt) right++;
        if (Math.abs(finding.index - plantedAt) <= 1) near++;
      }
    }
    falseFindings += wrong;
    if (wrong > 0) falseDatasets++;
  }
  const ms = (performance.now() - start) / datasets;
  console.log(
    `| ${JSON.stringify(scenario)} | ${percent(falseDatasets, datasets)} | ${planted ? percent(found, planted) : "—"} | ` +
      `${found ? `${percent(right, found)} (${percent(near, found)})` : "—"} | ${percent(falseFindings, falseFindings + found)} | ${ms.toFixed(0)} |`,
  );
}
