import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decideStateSchema, type DecideState } from "../../src/analysis/decide-state.ts";
import { decideGoldenLines } from "./decide-golden-scenarios.ts";

const golden = readFileSync(new URL("fixtures/decide-golden.jsonl", import.meta.url), "utf8")
  .split("\n")
  .filter((line) => line !== "");

/** Line by line, so a difference names its scenario and call. */
function expectGolden(lines: string[]) {
  expect(lines).toHaveLength(golden.length);
  lines.forEach((line, index) => expect(line).toBe(golden[index]));
}

describe("the decision step's golden decisions", () => {
  it("makes byte for byte the decisions recorded on the seeded runs (both designs, planted regressions, spent budgets, skipped, retried and monitor records)", () => {
    expectGolden(decideGoldenLines());
  });

  it("makes the same decisions when its state is written as JSON and read back through its schema between every batch, as a resumed run does", () => {
    const throughJson = (state: DecideState): DecideState =>
      decideStateSchema.parse(JSON.parse(JSON.stringify(state)));
    expectGolden(decideGoldenLines(throughJson));
  });
});
