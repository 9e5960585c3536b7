import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Execution } from "../../src/runner/build-schedule.ts";
import { IsolationScheduler } from "../../src/runner/isolation-scheduler.ts";
import type { TestIsolation } from "../../src/runner/test-isolation.ts";

const plain: TestIsolation = { network: false, conflicts: [], taints: [], tolerations: [] };
const exec = (name: string, iteration: number, isolation: Partial<TestIsolation> = {}): Execution => ({
  arm: "pr",
  component: "c",
  name,
  iteration,
  isolation: { ...plain, ...isolation },
});

/** Runs the scheduler to completion, finishing the oldest running execution at each step. */
function simulate(schedule: Execution[], limits: { parallel: number; networkParallel: number }) {
  const scheduler = new IsolationScheduler(schedule, limits);
  const running: Execution[] = [];
  const concurrent: Execution[][] = [];
  const order: string[] = [];
  while (!scheduler.exhausted || running.length > 0) {
    for (let e = scheduler.next(); e; e = scheduler.next()) {
      running.push(e);
      order.push(`${e.iteration}:${e.name}`);
    }
    if (running.length === 0) {
      if (scheduler.exhausted) break;
      throw new Error("deadlock: nothing runs and nothing may start");
    }
    concurrent.push([...running]);
    const finished = running.shift()!;
    scheduler.complete(finished);
  }
  return { concurrent, order };
}

describe("IsolationScheduler", () => {
  it("runs [Serial]-like executions alone, after the iteration's parallel ones", () => {
    const schedule = [0, 1].flatMap((i) => [
      exec("a", i),
      exec("serial", i, { alone: "serial" }),
      exec("b", i),
      exec("c", i),
    ]);
    const { concurrent, order } = simulate(schedule, { parallel: 4, networkParallel: 4 });
    for (const group of concurrent) {
      if (group.some((e) => e.isolation?.alone)) expect(group).toHaveLength(1);
    }
    expect(order).toEqual(["0:a", "0:b", "0:c", "0:serial", "1:a", "1:b", "1:c", "1:serial"]);
    expect(Math.max(...concurrent.map((g) => g.length))).toBe(3);
  });

  it("lets iterations without lone tests flow into each other", () => {
    const schedule = [0, 1].flatMap((i) => [exec("a", i), exec("b", i), exec("c", i)]);
    const { concurrent } = simulate(schedule, { parallel: 4, networkParallel: 4 });
    expect(concurrent[0]!.map((e) => e.iteration)).toEqual([0, 0, 0, 1]);
  });

  it("never overlaps executions sharing a conflict, but runs others beside them", () => {
    const schedule = [0, 1, 2].flatMap((i) => [
      exec("x", i, { conflicts: ["ipsec"] }),
      exec("y", i, { conflicts: ["ipsec", "mtu"] }),
      exec("p", i),
      exec("q", i),
    ]);
    const { concurrent } = simulate(schedule, { parallel: 8, networkParallel: 8 });
    for (const group of concurrent) {
      expect(group.filter((e) => e.isolation?.conflicts.includes("ipsec")).length).toBeLessThanOrEqual(1);
    }
    expect(concurrent.some((g) => g.some((e) => e.name === "x") && g.some((e) => e.name === "p"))).toBe(true);
  });

  it("holds [sig-network] tests to their own parallelism while others fill the remaining slots", () => {
    const schedule = Array.from({ length: 40 }, (_, i) => exec(`t${i}`, 0, { network: i % 4 !== 0 }));
    const { concurrent } = simulate(schedule, { parallel: 6, networkParallel: 2 });
    for (const group of concurrent) {
      expect(group.filter((e) => e.isolation?.network).length).toBeLessThanOrEqual(2);
      expect(group.length).toBeLessThanOrEqual(6);
    }
    expect(Math.max(...concurrent.map((g) => g.length))).toBeGreaterThan(2);
  });

  it("starts only tolerating tests while a taint is active", () => {
    const schedule = [
      exec("tainter", 0, { taints: ["ovn-restart"] }),
      exec("plain", 0),
      exec("tolerant", 0, { tolerations: ["ovn-restart"] }),
    ];
    const { concurrent } = simulate(schedule, { parallel: 4, networkParallel: 4 });
    expect(concurrent[0]!.map((e) => e.name)).toEqual(["tainter", "tolerant"]);
    for (const group of concurrent) {
      if (group.some((e) => e.name === "tainter")) expect(group.map((e) => e.name)).not.toContain("plain");
    }
  });

  it("keeps every rule for any mix of tests and any completion order, and runs each execution once", () => {
    const isolationArb = fc.record({
      alone: fc.option(fc.constantFrom("serial" as const, "disruptive" as const, "isolation" as const), {
        nil: undefined,
        freq: 4,
      }),
      network: fc.boolean(),
      conflicts: fc.subarray(["a", "b", "c"], { maxLength: 2 }),
      taints: fc.subarray(["t"], { maxLength: 1 }),
      tolerations: fc.subarray(["t"], { maxLength: 1 }),
      // [Serial:Self]: copies of one test (same key) in either arm and any iteration.
      serialSelf: fc.option(fc.constantFrom("x", "y"), { nil: undefined, freq: 2 }),
    });
    fc.assert(
      fc.property(
        fc.array(isolationArb, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 50 }),
        fc.boolean(),
        (isolations, iterations, parallel, networkParallelWish, picks, bothArms) => {
          const networkParallel = Math.min(parallel, networkParallelWish);
          const arms = bothArms ? (["pr", "baseline"] as const) : (["pr"] as const);
          const schedule = Array.from({ length: iterations }, (_, i) =>
            arms.flatMap((arm) =>
              isolations.map((iso, t) => {
                const { alone, serialSelf, ...rest } = iso;
                return {
                  ...exec(`t${t}`, i, {
                    ...rest,
                    ...(alone ? { alone } : {}),
                    ...(serialSelf ? { serialSelf } : {}),
                  }),
                  arm,
                };
              }),
            ),
          ).flat();
          const scheduler = new IsolationScheduler(schedule, { parallel, networkParallel });
          const running: Execution[] = [];
          const started: Execution[] = [];
          let step = 0;
          while (!scheduler.exhausted || running.length > 0) {
            for (let e = scheduler.next(); e; e = scheduler.next()) {
              running.push(e);
              started.push(e);
            }
            if (running.length === 0) {
              if (scheduler.exhausted) break;
              throw new Error("deadlock");
            }
            expect(running.length).toBeLessThanOrEqual(parallel);
            expect(running.filter((e) => e.isolation?.network).length).toBeLessThanOrEqual(networkParallel);
            if (running.some((e) => e.isolation?.alone)) expect(running).toHaveLength(1);
            for (const conflict of ["a", "b", "c"]) {
              expect(
                running.filter((e) => e.isolation?.conflicts.includes(conflict)).length,
              ).toBeLessThanOrEqual(1);
            }
            for (const self of ["x", "y"]) {
              expect(running.filter((e) => e.isolation?.serialSelf === self).length).toBeLessThanOrEqual(1);
            }
            if (running.some((e) => e.isolation?.taints.includes("t"))) {
              const others = running.filter((e) => !e.isolation?.taints.includes("t"));
              expect(others.every((e) => e.isolation?.tolerations.includes("t"))).toBe(true);
            }
            const [finished] = running.splice(picks[step++ % picks.length]! % running.length, 1);
            scheduler.complete(finished!);
          }
          expect(started.map((e) => `${e.arm}:${e.iteration}:${e.name}`).sort()).toEqual(
            schedule.map((e) => `${e.arm}:${e.iteration}:${e.name}`).sort(),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
