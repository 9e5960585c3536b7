import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decideGoldenLines } from "./decide-golden-scenarios.ts";

describe("the decision step's golden decisions", () => {
  it("makes byte for byte the decisions recorded on the seeded runs (both designs, planted regressions, spent budgets, skipped, retried and monitor records)", () => {
    const golden = readFileSync(new URL("fixtures/decide-golden.jsonl", import.meta.url), "utf8")
      .split("\n")
      .filter((line) => line !== "");
    const lines = decideGoldenLines();
    expect(lines).toHaveLength(golden.length);
    // Line by line, so a difference names its scenario and call.
    lines.forEach((line, index) => expect(line).toBe(golden[index]));
  });
});
