import type { Arm } from "@netstress/core/model/result-record.ts";
import { seededRandom } from "./seeded-random.ts";
import type { TestIsolation } from "./test-isolation.ts";

export interface ScheduledTest {
  arm: Arm;
  component: string;
  name: string;
  /** Omitted: an ordinary parallel test. */
  isolation?: TestIsolation;
  /** The spec's `resources.duration` hint, in ms, when it gives one. */
  durationMs?: number | undefined;
}

export interface Execution extends ScheduledTest {
  iteration: number;
}

/**
 * Orders every (arm, component, test) of every iteration. Within an iteration the order is a
 * seeded shuffle across arms and components, so suites of different teams (and the PR and
 * baseline arms) stress the cluster together; the same seed always yields the same order. Tests
 * whose spec hints at their duration then come first, longest first (the longest-processing-time
 * rule: a long test started last would leave the iteration waiting on it alone), and the rest
 * follow in the shuffled order. Both arms' copies of a test sort by the longer of their hints, so
 * a PR that changes a hint never moves its own copies ahead of the baseline's: the shuffle alone
 * decides which copy goes first.
 */
export function buildSchedule(options: {
  tests: readonly ScheduledTest[];
  iterations: number;
  firstIteration?: number;
  seed: string;
}): Execution[] {
  const { tests, iterations, firstIteration = 0, seed } = options;
  const hint = new Map<string, number>();
  for (const test of tests) {
    if (test.durationMs === undefined) continue;
    const key = `${test.component}\0${test.name}`;
    hint.set(key, Math.max(hint.get(key) ?? 0, test.durationMs));
  }
  const hintOf = (test: ScheduledTest) => hint.get(`${test.component}\0${test.name}`) ?? 0;
  const schedule: Execution[] = [];
  for (let iteration = firstIteration; iteration < firstIteration + iterations; iteration++) {
    const random = seededRandom(`${seed}/${iteration}`);
    const order = tests.map((test) => ({ ...test, iteration }));
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    // A stable sort: equal hints (and no hints) keep the shuffled order.
    if (hint.size > 0) order.sort((a, b) => hintOf(b) - hintOf(a));
    schedule.push(...order);
  }
  return schedule;
}
