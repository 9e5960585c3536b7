import type { DecideRecord } from "../../src/analysis/decide-records.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulateAdaptiveRun } from "../../test/analysis/adaptive-run-simulation.ts";

/**
 * Time per decision-step call on a long adaptive run: 500 tests of the analysis' mix, shared
 * clusters, target 2% → 10% (few tests decide early), cut after the last batch measured. Prints,
 * per batch measured, the median over ROUNDS seeded runs of the call that follows that batch.
 * Usage: node --import tsx bench/analysis/time-decide-batch.ts [ROUNDS] [BATCH…]
 */
const [roundsArgument = "3", ...batchArguments] = process.argv.slice(2);
const rounds = Number(roundsArgument);
const measured = (batchArguments.length > 0 ? batchArguments : ["1", "10", "40"]).map(Number);
const last = Math.max(...measured);
const times = new Map<number, number[]>(measured.map((batch) => [batch, []]));
const records = new Map<number, { total: number; batch: number }>();
for (let round = 0; round < rounds; round++) {
  let batchDone = 0;
  let batches = 0;
  let total = 0;
  let latest = 0;
  simulateAdaptiveRun({
    random: seededRandom(`time-decide-batch ${round}`),
    tests: 500,
    payloads: "same",
    target: { from: 0.02, to: 0.1 },
    costs: { cluster: 0, upgrade: 0 },
    budget: 1e9,
    maxBatches: last,
    alter: (batch: DecideRecord[]) => {
      batches++;
      total += batch.length;
      latest = batch.length;
      batchDone = performance.now();
      return batch;
    },
    onDecision: () => {
      if (!times.has(batches)) return;
      times.get(batches)!.push(performance.now() - batchDone);
      records.set(batches, { total, batch: latest });
    },
  });
}
const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [batch, values] of times)
  console.log(
    `after batch ${batch} (last run: ${records.get(batch)?.batch ?? "?"} records in it, ${records.get(batch)?.total ?? "?"} so far): median ${median(values).toFixed(1)} ms per call over ${values.length} runs [${values.map((v) => v.toFixed(1)).join(", ")}]`,
  );
