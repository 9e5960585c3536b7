/**
 * The isolation-aware scheduler's own cost per execution, without processes: 100,000 executions
 * (10 iterations of 10,000 tests in two arms) handed out and completed at parallelism 8, once with
 * ordinary tests only and once with a realistic mix (one in 50 [Serial], one in 20 sharing one of
 * three conflicts, network tests held to 4). Usage: node --import tsx bench/runner/isolation-scheduler.bench.ts
 */
import type { Execution } from "../../src/runner/build-schedule.ts";
import { buildSchedule } from "../../src/runner/build-schedule.ts";
import { IsolationScheduler } from "../../src/runner/isolation-scheduler.ts";
import type { TestIsolation } from "../../src/runner/test-isolation.ts";

const TESTS = 5_000;
const ITERATIONS = 10;

function isolation(i: number, mixed: boolean): TestIsolation {
  if (!mixed) return { network: false, conflicts: [], taints: [], tolerations: [] };
  return {
    ...(i % 50 === 0 ? { alone: "serial" as const } : {}),
    network: i % 2 === 0,
    conflicts: i % 20 === 1 ? [`conflict-${i % 3}`] : [],
    taints: [],
    tolerations: [],
  };
}

function measure(mixed: boolean): { perExecutionUs: number; executions: number } {
  const tests = (["pr", "baseline"] as const).flatMap((arm) =>
    Array.from({ length: TESTS }, (_, i) => ({
      arm,
      component: "c",
      name: `t${i}`,
      isolation: isolation(i, mixed),
    })),
  );
  const schedule = buildSchedule({ tests, iterations: ITERATIONS, seed: "bench" });
  const started = performance.now();
  const scheduler = new IsolationScheduler(schedule, { parallel: 8, networkParallel: mixed ? 4 : 8 });
  const running: Execution[] = [];
  let done = 0;
  while (!scheduler.exhausted || running.length > 0) {
    for (let e = scheduler.next(); e; e = scheduler.next()) running.push(e);
    const finished = running.shift();
    if (!finished) break;
    scheduler.complete(finished);
    done += 1;
  }
  return { perExecutionUs: ((performance.now() - started) * 1000) / done, executions: done };
}

for (const mixed of [false, true]) {
  measure(mixed); // warm-up
  const runs = Array.from({ length: 5 }, () => measure(mixed).perExecutionUs).sort((a, b) => a - b);
  console.log(
    `${mixed ? "mixed isolation" : "ordinary tests "}: ${(TESTS * 2 * ITERATIONS).toLocaleString()} executions, ` +
      `median ${runs[2]!.toFixed(2)} µs per execution (min ${runs[0]!.toFixed(2)}, max ${runs[4]!.toFixed(2)})`,
  );
}
