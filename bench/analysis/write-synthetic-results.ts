import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { syntheticRun } from "./synthetic-results.ts";

/** Usage: tsx bench/analysis/write-synthetic-results.ts OUT.jsonl TESTS ITERATIONS [SEED] [CLUSTERS_PER_ARM] */
const [out, tests = "10000", iterations = "20", seed = "bench", clustersPerArm = "0"] = process.argv.slice(2);
if (!out) {
  console.error("usage: write-synthetic-results.ts OUT.jsonl TESTS ITERATIONS [SEED] [CLUSTERS_PER_ARM]");
  process.exit(2);
}
const stream = createWriteStream(out);
let records = 0;
for (const record of syntheticRun({
  tests: Number(tests),
  iterations: Number(iterations),
  seed,
  regressEvery: 500,
  clustersPerArm: Number(clustersPerArm),
})) {
  if (!stream.write(`${JSON.stringify(record)}\n`)) await once(stream, "drain");
  records++;
}
stream.end();
await once(stream, "finish");
console.log(`${records} records → ${out}`);
