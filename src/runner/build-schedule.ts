import type { Arm } from "./result-record.ts";
import { seededRandom } from "./seeded-random.ts";
import type { TestIsolation } from "./test-isolation.ts";

export interface ScheduledTest {
  arm: Arm;
  component: string;
  name: string;
  /** Omitted: an ordinary parallel test. */
  isolation?: TestIsolation;
}

export interface Execution extends ScheduledTest {
  iteration: number;
}

/**
 * Orders every (arm, component, test) of every iteration. Within an iteration the order is a
 * seeded shuffle across arms and components, so suites of different teams (and the PR and
 * baseline arms) stress the cluster together; the same seed always yields the same order.
 */
export function buildSchedule(options: {
  tests: readonly ScheduledTest[];
  iterations: number;
  firstIteration?: number;
  seed: string;
}): Execution[] {
  const { tests, iterations, firstIteration = 0, seed } = options;
  const schedule: Execution[] = [];
  for (let iteration = firstIteration; iteration < firstIteration + iterations; iteration++) {
    const random = seededRandom(`${seed}/${iteration}`);
    const order = tests.map((test) => ({ ...test, iteration }));
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    schedule.push(...order);
  }
  return schedule;
}
