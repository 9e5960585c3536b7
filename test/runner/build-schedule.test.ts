import { describe, expect, it } from "vitest";
import { buildSchedule, type ScheduledTest } from "../../src/runner/build-schedule.ts";

const tests: ScheduledTest[] = [
  ...["a", "b", "c", "d"].map((name) => ({ arm: "pr" as const, component: "ovn-kubernetes", name })),
  ...["e", "f", "g"].map((name) => ({ arm: "pr" as const, component: "sdn", name })),
  ...["a", "b", "c", "d"].map((name) => ({ arm: "baseline" as const, component: "ovn-kubernetes", name })),
];
const key = (e: { arm: string; component: string; name: string; iteration: number }) =>
  `${e.iteration}:${e.arm}/${e.component}/${e.name}`;

describe("buildSchedule", () => {
  it("schedules every test of every arm once per iteration", () => {
    const schedule = buildSchedule({ tests, iterations: 5, seed: "s" });
    expect(schedule).toHaveLength(tests.length * 5);
    expect(new Set(schedule.map(key)).size).toBe(schedule.length);
  });

  it("gives the same order for the same seed and another order for another seed", () => {
    const a = buildSchedule({ tests, iterations: 3, seed: "42" }).map(key);
    const b = buildSchedule({ tests, iterations: 3, seed: "42" }).map(key);
    const c = buildSchedule({ tests, iterations: 3, seed: "43" }).map(key);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
  });

  it("interleaves components and arms instead of running one suite after another", () => {
    const schedule = buildSchedule({ tests, iterations: 20, seed: "interleave" });
    let switches = 0;
    for (let i = 1; i < schedule.length; i++) {
      const prev = schedule[i - 1]!;
      const cur = schedule[i]!;
      if (prev.arm !== cur.arm || prev.component !== cur.component) switches++;
    }
    // Suites run back to back would switch about once per iteration; a shuffle switches most of the time.
    expect(switches).toBeGreaterThan(schedule.length / 3);
  });

  it("keeps iterations in order and numbers shards from their first iteration", () => {
    const schedule = buildSchedule({ tests, iterations: 2, firstIteration: 7, seed: "s" });
    expect(schedule.slice(0, tests.length).every((e) => e.iteration === 7)).toBe(true);
    expect(schedule.slice(tests.length).every((e) => e.iteration === 8)).toBe(true);
  });
});
