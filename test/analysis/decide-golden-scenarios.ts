import type { DecideRecord } from "../../src/analysis/decide-records.ts";
import { seededRandom } from "../../src/runner/seeded-random.ts";
import { simulateAdaptiveRun, type AdaptiveRunOptions } from "./adaptive-run-simulation.ts";

const PLUS_30 = { from: 0.02, to: 0.32 };
const TWO_TO_TEN = { from: 0.02, to: 0.1 };
const COSTS = { cluster: 200, upgrade: 50 };

/**
 * Records as a bot's batch holds them: shuffled (so clusters first appear in any order), a share
 * skipped, a failed execution retried in the same iteration, and [Invariant] monitors the decision
 * step is not asked about.
 */
function messy(seed: string): (records: DecideRecord[]) => DecideRecord[] {
  const random = seededRandom(seed);
  return (records) => {
    const out: DecideRecord[] = [];
    for (const record of records) {
      if (random() < 0.05) {
        out.push({ ...record, result: "skipped" });
        continue;
      }
      out.push(record);
      if (record.result === "failed") out.push({ ...record, result: random() < 0.5 ? "passed" : "failed" });
      if (random() < 0.1)
        out.push({
          ...record,
          name: "[sig-network][Invariant] monitor",
          result: random() < 0.2 ? "failed" : "passed",
        });
    }
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
}

type Scenario = Omit<AdaptiveRunOptions, "random" | "onDecision">;

/** Seeded adaptive runs covering both designs, planted regressions, a spent budget and messy records. */
export const DECIDE_GOLDEN_SCENARIOS: Record<string, () => Scenario> = {
  "shared-null": () => ({ tests: 10, payloads: "same", target: PLUS_30, costs: COSTS, budget: 60_000 }),
  "shared-planted": () => ({
    tests: 10,
    payloads: "same",
    target: PLUS_30,
    costs: COSTS,
    budget: 60_000,
    planted: 2,
    plantedIncrease: 0.3,
    plantedBaseRate: 0.02,
  }),
  "shared-2to10-budget-spent": () => ({
    tests: 10,
    payloads: "same",
    target: TWO_TO_TEN,
    costs: COSTS,
    budget: 2_500,
    planted: 1,
    plantedIncrease: 0.08,
    plantedBaseRate: 0.02,
  }),
  "shared-bot-costs-messy": () => ({
    tests: 12,
    payloads: "same",
    target: PLUS_30,
    costs: { cluster: 0, upgrade: 0 },
    budget: 6_000,
    planted: 1,
    plantedIncrease: 0.5,
    alter: messy("golden shared messy"),
  }),
  "crossover-null": () => ({ tests: 10, payloads: "differ", target: PLUS_30, costs: COSTS, budget: 60_000 }),
  "crossover-planted-upgrade-effect": () => ({
    tests: 10,
    payloads: "differ",
    target: PLUS_30,
    costs: COSTS,
    budget: 60_000,
    planted: 2,
    plantedIncrease: 0.3,
    plantedBaseRate: 0.02,
    upgradeEffect: 0.3,
  }),
  "crossover-messy-budget-spent": () => ({
    tests: 12,
    payloads: "differ",
    target: PLUS_30,
    costs: COSTS,
    budget: 4_000,
    planted: 1,
    alter: messy("golden crossover messy"),
  }),
};

/**
 * Every decision of every scenario, one JSON line each, in the order the runs made them; `carry`
 * is what becomes of the decision step's state between batches.
 */
export function decideGoldenLines(carry?: AdaptiveRunOptions["carry"]): string[] {
  const lines: string[] = [];
  for (const [scenario, options] of Object.entries(DECIDE_GOLDEN_SCENARIOS)) {
    let call = 0;
    simulateAdaptiveRun({
      ...options(),
      random: seededRandom(`decide golden ${scenario}`),
      ...(carry ? { carry } : {}),
      onDecision: (decision) => lines.push(JSON.stringify({ scenario, call: ++call, decision })),
    });
  }
  return lines;
}
