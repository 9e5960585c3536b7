import { loadavg } from "node:os";
import { analyzeRun } from "../../src/report/analyze-run.ts";

/**
 * Times analyzeRun in-process (no CLI start-up), from results.jsonl to every report.
 * Usage: node --import tsx bench/analysis/time-analyze-run.ts RESULTS.jsonl OUT_DIR [REPEATS]
 */
const [results, outDir, repeats = "5"] = process.argv.slice(2);
if (!results || !outDir) {
  console.error("usage: time-analyze-run.ts RESULTS.jsonl OUT_DIR [REPEATS]");
  process.exit(2);
}
const wall: number[] = [];
const cpu: number[] = [];
for (let run = 0; run < Number(repeats); run++) {
  const start = performance.now();
  const startCpu = process.cpuUsage();
  const result = await analyzeRun({ pr: results, outDir });
  const used = process.cpuUsage(startCpu);
  wall.push(performance.now() - start);
  cpu.push((used.user + used.system) / 1000);
  if (run === 0) console.log(`${result.conclusion}: ${result.title}`);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `analyzeRun over ${wall.length} runs: median wall ${median(wall).toFixed(0)} ms (min ${Math.min(...wall).toFixed(0)}), ` +
    `median CPU ${median(cpu).toFixed(0)} ms (min ${Math.min(...cpu).toFixed(0)}); load average ${loadavg()[0]!.toFixed(1)}`,
);
