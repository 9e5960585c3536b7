import { crossArchDifferences } from "../../src/analysis/cross-arch.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import {
  baseRate,
  simulatePayloadHistory,
  testName,
  type PayloadHistoryOptions,
} from "../../test/analysis/payload-history-simulation.ts";

/**
 * The cross-arch simulation of test/analysis/cross-arch.test.ts at a larger scale: two arches with
 * the same tests (shared base rates), 20 payloads each on clusters of their own; the newest payload
 * is judged. Planted tests fail more often on arm64 on that payload only.
 * Usage: node --import tsx bench/analysis/cross-arch-simulation.ts [DATASETS] [TESTS] [SCENARIO…]
 */
const [datasetsArgument = "300", testsArgument = "500", ...scenarioArguments] = process.argv.slice(2);
const datasets = Number(datasetsArgument);
const tests = Number(testsArgument);
const scenarios: Partial<PayloadHistoryOptions>[] =
  scenarioArguments.length > 0
    ? scenarioArguments.map((text) => JSON.parse(text) as Partial<PayloadHistoryOptions>)
    : [
        {},
        { badOdds: 15, clusterSpread: 1.2 },
        { clustersPerPayload: 6, iterationsPerCluster: 20 },
        { clusterSpread: 0, badClusterShare: 0 },
        { planted: 10, plantedIncrease: 0.2 },
        { planted: 10, plantedIncrease: 0.3 },
        { planted: 10, plantedIncrease: 0.5 },
        { planted: 10, plantedIncrease: 0.2, clustersPerPayload: 6, iterationsPerCluster: 20 },
        { planted: 10, plantedIncrease: 0.3, clustersPerPayload: 6, iterationsPerCluster: 20 },
      ];

const percent = (part: number, whole: number) =>
  whole === 0 ? "—" : `${((100 * part) / whole).toFixed(1)}%`;
console.log(
  `${datasets} payloads × ${tests} tests per scenario; 3 clusters × 10 iterations per arch and payload unless stated`,
);
console.log("| scenario | false datasets | power | false share of flagged | ms per payload |");
console.log("| --- | --- | --- | --- | --- |");
for (const scenario of scenarios) {
  const random = seededRandom(`cross-arch bench ${JSON.stringify(scenario)}`);
  let falseDatasets = 0;
  let falseFindings = 0;
  let found = 0;
  let planted = 0;
  const start = performance.now();
  for (let d = 0; d < datasets; d++) {
    const bases = Array.from({ length: tests }, () => baseRate(random));
    const options = {
      random,
      tests,
      payloads: 20,
      clustersPerPayload: 3,
      iterationsPerCluster: 10,
      bases,
      ...scenario,
    };
    const amd64 = simulatePayloadHistory({ ...options, planted: 0 });
    const arm64 = simulatePayloadHistory({ ...options, plantedAt: 19 });
    const plantedTests = new Set(Array.from({ length: scenario.planted ?? 0 }, (_, i) => testName(i)));
    planted += plantedTests.size;
    const result = crossArchDifferences({
      payload: amd64[19]!.payload,
      histories: [
        { arch: "amd64", history: amd64 },
        { arch: "arm64", history: arm64 },
      ],
    });
    let wrong = 0;
    for (const finding of result.findings) {
      if (finding.arch === "arm64" && plantedTests.has(finding.test)) found++;
      else wrong++;
    }
    falseFindings += wrong;
    if (wrong > 0) falseDatasets++;
  }
  const ms = (performance.now() - start) / datasets;
  console.log(
    `| ${JSON.stringify(scenario)} | ${percent(falseDatasets, datasets)} | ${planted ? percent(found, planted) : "—"} | ` +
      `${percent(falseFindings, falseFindings + found)} | ${ms.toFixed(0)} |`,
  );
}
