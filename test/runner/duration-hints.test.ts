import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import type { RunTestsOptions, RunTestsResult } from "../../src/ote/run-tests.ts";
import { buildSchedule } from "../../src/runner/build-schedule.ts";
import { preparePlan } from "../../src/runner/prepare-plan.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import { runPlan } from "../../src/runner/run-plan.ts";
import { fixtureInfo, fixtureSpec, writeProtocolFixture } from "../helpers/protocol-fixture-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const LONG = "[sig-storage] resizes a volume while it is written";
const SHORTS = [1, 2, 3, 4, 5, 6].map((i) => `[sig-storage] mounts a volume ${i}`);
const TAKES: Record<string, number> = { [LONG]: 1_000, ...Object.fromEntries(SHORTS.map((s) => [s, 150])) };

let dir: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

/** A binary listing the tests, with or without `resources.duration` hints. */
async function binary(name: string, hinted: boolean): Promise<string> {
  const hint = (test: string) =>
    hinted ? { resources: { isolation: {}, duration: `${TAKES[test]}ms` } } : {};
  return writeProtocolFixture(join(dir.path, name), {
    info: fixtureInfo("storage"),
    listLines: [LONG, ...SHORTS].map((test) => fixtureSpec(test, hint(test))),
  });
}

/** Each test takes its time: what the scheduler's order alone decides is how long the iteration lasts. */
async function timedTest(options: RunTestsOptions): Promise<RunTestsResult> {
  const name = options.names[0]!;
  const start = new Date();
  await sleep(TAKES[name]!);
  const stamp = (d: Date) => `${d.toISOString().replace("T", " ").slice(0, 23)}000 UTC`;
  return {
    aborted: false,
    outcomes: [
      {
        name,
        lifecycle: "blocking",
        duration: TAKES[name]!,
        startTime: stamp(start),
        endTime: stamp(new Date()),
        result: "passed",
        output: "",
      },
    ],
  };
}

async function makespan(path: string, seed: string): Promise<number> {
  const prepared = await preparePlan({
    plan: { arch: hostArch(), arms: [{ arm: "pr", components: [{ component: "storage", binary: path }] }] },
    cacheDir: join(dir.path, "cache"),
    env: { PATH: process.env.PATH },
  });
  const started = performance.now();
  const outcome = await runPlan({
    prepared,
    iterations: 1,
    parallel: 2,
    seed,
    timeoutMs: 60_000,
    retries: 0,
    onRecord: () => {},
    runTests: timedTest,
  });
  expect(outcome).toMatchObject({ status: "completed", records: 7 });
  return performance.now() - started;
}

describe("the resources.duration hint", () => {
  it("starts the longest tests first, so an iteration whose long test was drawn last finishes sooner", async () => {
    // A seed whose shuffle puts the long test last: without hints it starts after the short ones.
    const tests = [LONG, ...SHORTS].map((name) => ({ arm: "pr" as const, component: "storage", name }));
    const seed = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"].find(
      (s) => buildSchedule({ tests, iterations: 1, seed: s }).at(-1)!.name === LONG,
    )!;
    expect(seed).toBeDefined();
    const unhinted = await makespan(await binary("plain-tests-ext", false), seed);
    const hinted = await makespan(await binary("hinted-tests-ext", true), seed);
    // Two slots: unhinted, 6 × 150 ms of short tests (450 ms on two slots) and then the 1 s one;
    // hinted, the long one beside the six short ones: about 1 s.
    expect(unhinted).toBeGreaterThan(1_400);
    expect(hinted).toBeLessThan(1_250);
  }, 30_000);

  it("schedules both arms' copies of a test alike, whichever arm hints longer", () => {
    const arms: Arm[] = ["pr", "baseline"];
    const tests = arms.flatMap((arm) => [
      // The PR's build says its copy of the long test takes longer: no head start for it.
      { arm, component: "storage", name: LONG, durationMs: arm === "pr" ? 120_000 : 60_000 },
      ...SHORTS.map((name) => ({ arm, component: "storage", name, durationMs: 1_000 })),
      { arm, component: "storage", name: "[sig-storage] gives no hint" },
    ]);
    const iterations = 200;
    const schedule = buildSchedule({ tests, iterations, seed: "fair" });
    let prFirst = 0;
    for (let iteration = 0; iteration < iterations; iteration++) {
      const order = schedule.filter((e) => e.iteration === iteration);
      // The long test's two copies lead, then the hinted short ones, then the unhinted ones.
      expect(order.slice(0, 2).map((e) => e.name)).toEqual([LONG, LONG]);
      expect(order.slice(-2).map((e) => e.name)).toEqual([
        "[sig-storage] gives no hint",
        "[sig-storage] gives no hint",
      ]);
      if (order[0]!.arm === "pr") prFirst += 1;
    }
    // The seeded shuffle alone decides which copy goes first: about half the time each.
    expect(prFirst).toBeGreaterThan(iterations * 0.35);
    expect(prFirst).toBeLessThan(iterations * 0.65);
  });
});
