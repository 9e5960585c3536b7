import { describe, expect, it } from "vitest";
import { decideBatch, type DecideInput } from "../../src/analysis/decide-batch.ts";
import type { DecideRecord } from "../../src/analysis/decide-records.ts";
import type { DecideState } from "../../src/analysis/decide-state.ts";

const ITERATIONS = 4;

/** One arm's records on each of `clusters`: per test, how many of its 4 iterations fail there. */
function armOn(
  arm: DecideRecord["arm"],
  clusters: string[],
  failing: Record<string, number>,
): DecideRecord[] {
  return clusters.flatMap((cluster) =>
    Object.entries(failing).flatMap(([name, failed]) =>
      Array.from({ length: ITERATIONS }, (_, iteration) => ({
        arm,
        cluster,
        iteration,
        name,
        result: iteration < failed ? ("failed" as const) : ("passed" as const),
      })),
    ),
  );
}

const names = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);

/** A crossover's decision steps, each fed the batches given, the state carried as a run carries it. */
function crossover(tests: string[]) {
  const settings: DecideInput = {
    tests,
    target: { from: 0.02, to: 0.32 },
    payloads: "differ",
    costs: { cluster: 0, upgrade: 0 },
    budget: 10_000_000,
  };
  let state: DecideState | undefined;
  return (records: DecideRecord[]) => {
    const result = decideBatch({ ...settings, ...(state ? { state } : {}), batches: [records] });
    state = result.state;
    return new Map(result.decision.tests.map((test) => [test.name, test]));
  };
}

/** Eight clusters on the baseline payload, then upgraded: every one of `suspected` fails each PR iteration. */
function suspect(decide: ReturnType<typeof crossover>, tests: string[], suspected: string[]) {
  const upgraded = names("u", 8);
  decide(armOn("baseline", upgraded, Object.fromEntries(tests.map((name) => [name, 0]))));
  return decide(
    armOn("pr", upgraded, Object.fromEntries(tests.map((name) => [name, suspected.includes(name) ? 4 : 0]))),
  );
}

describe("a crossover's suspects and their confirmation on clusters never upgraded", () => {
  it("suspects a test once its contrasts through an upgrade reach a tenth of the test count, long before what a regression needs", () => {
    // 500 tests: a regression needs 500/0.05 = 10,000; eight clusters that each fail the test on
    // every PR iteration and never before give about 58.
    const tests = ["a", ...names("filler-", 499)];
    const decisions = suspect(crossover(tests), ["a"], ["a"]);
    expect(decisions.get("a")!.decision).toBe("undecided");
    expect(decisions.get("a")!.confirmation).toMatchObject({ pairs: 0 });
    expect(decisions.get("a")!.eRegression).toBeLessThan(10_000);
  });

  it("confirms a suspect once most pairs show the PR cluster failing more, by however little", () => {
    const tests = ["a", "b"];
    const decide = crossover(tests);
    suspect(decide, tests, ["a"]);
    // Eight pairs: the PR cluster fails one iteration in four, the baseline cluster none. The
    // contrasts' mean (+25 points) alone would need about twenty pairs for the first suspect's 32.9.
    const decisions = decide([
      ...armOn("pr", names("p", 8), { a: 1, b: 0 }),
      ...armOn("baseline", names("b", 8), { a: 0, b: 0 }),
    ]);
    expect(decisions.get("a")!.confirmation).toMatchObject({ pairs: 8 });
    expect(decisions.get("a")!.confirmation!.threshold).toBeCloseTo(32.9, 1);
    expect(decisions.get("a")!.decision).toBe("regression");
  });

  it("passes a confirmed suspect's share of α on to the next suspect, and no other's", () => {
    const tests = ["a", "b"];
    // Both suspected in one batch: a is the first suspect, b the second (131.6 on its own).
    const confirmedFirst = crossover(tests);
    suspect(confirmedFirst, tests, ["a", "b"]);
    const pairs = { pr: names("p", 8), baseline: names("b", 8) };
    const both = confirmedFirst([
      ...armOn("pr", pairs.pr, { a: 1, b: 1 }),
      ...armOn("baseline", pairs.baseline, { a: 0, b: 0 }),
    ]);
    expect(both.get("a")!.decision).toBe("regression");
    expect(both.get("b")!.confirmation!.threshold).toBeCloseTo(1 / (0.05 * (6 / Math.PI ** 2) * 1.25), 1);
    expect(both.get("b")!.decision).toBe("regression");

    const clearedFirst = crossover(tests);
    suspect(clearedFirst, tests, ["a", "b"]);
    const onlyB = clearedFirst([
      ...armOn("pr", pairs.pr, { a: 0, b: 1 }),
      ...armOn("baseline", pairs.baseline, { a: 0, b: 0 }),
    ]);
    expect(onlyB.get("a")!.decision).not.toBe("regression");
    expect(onlyB.get("b")!.confirmation!.threshold).toBeCloseTo((Math.PI ** 2 * 4) / (6 * 0.05), 1);
    expect(onlyB.get("b")!.decision).toBe("undecided");
  });
});
