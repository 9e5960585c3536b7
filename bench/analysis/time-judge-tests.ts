import { loadavg } from "node:os";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { createResultsAggregator } from "../../src/analysis/results-aggregator.ts";
import { emptyInputReport, readResults } from "../../src/report/read-results.ts";

/**
 * Times judging alone: the results are read and aggregated once, then judgeTests runs REPEATS times
 * on the same aggregate, so reading and the reports do not hide what judging costs.
 * Usage: node --import tsx bench/analysis/time-judge-tests.ts RESULTS.jsonl [REPEATS]
 */
const [results, repeats = "9"] = process.argv.slice(2);
if (!results) {
  console.error("usage: time-judge-tests.ts RESULTS.jsonl [REPEATS]");
  process.exit(2);
}
const aggregator = createResultsAggregator();
await readResults({ files: [results], role: "pr", aggregator, report: emptyInputReport() });
const run = aggregator.finish();
const cpu: number[] = [];
for (let round = 0; round < Number(repeats); round++) {
  const start = process.cpuUsage();
  const analysis = judgeTests({ run });
  const used = process.cpuUsage(start);
  cpu.push((used.user + used.system) / 1000);
  if (round === 0)
    console.log(`${analysis.rule} rule, ${analysis.tests.length} tests, ${analysis.conclusion}`);
}
const median = [...cpu].sort((a, b) => a - b)[Math.floor(cpu.length / 2)]!;
console.log(
  `judgeTests over ${cpu.length} rounds: median CPU ${median.toFixed(0)} ms (min ${Math.min(...cpu).toFixed(0)}); ` +
    `load average ${loadavg()[0]!.toFixed(1)}`,
);
