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
const times: number[] = [];
for (let run = 0; run < Number(repeats); run++) {
  const start = performance.now();
  const result = await analyzeRun({ pr: results, outDir });
  times.push(performance.now() - start);
  if (run === 0) console.log(`${result.conclusion}: ${result.title}`);
}
times.sort((a, b) => a - b);
console.log(
  `analyzeRun median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms over ${times.length} runs (min ${times[0]!.toFixed(0)}, max ${times.at(-1)!.toFixed(0)})`,
);
