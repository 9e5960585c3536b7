import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import {
  INVARIANT_TEST,
  SERIAL_TEST,
  SIGTERM_INVARIANT_TEST,
  STUCK_INVARIANT_TEST,
  invariantSample,
  type SampleSuite,
} from "@netstress/testbed/sample-ext/suites.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { parseOteTimestamp } from "../../src/ote/parse-ote-timestamp.ts";
import { executeRun, type ExecuteRunOptions } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
// Ordinary tests last 30–60 ms: what is checked is the invariants' span around them, not their length.
const env = { ...process.env, SAMPLE_EXT_SEED: "invariants", SAMPLE_EXT_TIME_SCALE: "0.3", KUBECONFIG: "" };
const arch = hostArch();

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const without = (names: string[]): SampleSuite => ({
  ...invariantSample,
  tests: invariantSample.tests.filter((t) => !names.includes(t.name)),
});

async function run(
  name: string,
  suite: SampleSuite,
  options: Partial<ExecuteRunOptions> & { iterations: number; parallel: number },
) {
  const binary = await writeSampleBinary({ suite, path: join(dir.path, `${name}-tests-ext`) });
  const { paths, outcome } = await executeRun({
    plan: {
      arch,
      arms: (["pr", "baseline"] as const).map((arm) => ({
        arm,
        components: [{ component: suite.component, binary }],
      })),
    },
    outDir: join(dir.path, name),
    seed: name,
    timeoutMs: 60_000,
    retries: 1,
    env,
    ...options,
  });
  const records: ResultRecord[] = [];
  for await (const r of readResultRecords(paths.results)) records.push(r);
  return { records, outcome };
}

const span = (r: ResultRecord) => ({
  start: parseOteTimestamp(r.startTime!)!.getTime(),
  end: parseOteTimestamp(r.endTime!)!.getTime(),
});
const isInvariant = (r: ResultRecord) => r.name.includes("[Invariant]");

describe("[Invariant] tests", () => {
  it("span their iteration in both arms, take no slot of the parallelism, and wrap up on the stop file or SIGTERM", async () => {
    const graceMs = 600;
    const { records } = await run("span", without([STUCK_INVARIANT_TEST]), {
      iterations: 2,
      parallel: 1,
      invariantGraceMs: graceMs,
      // The SIGTERM-only monitor never says it watches: the iteration waits this long for it.
      invariantReadyMs: 500,
    });
    expect(records).toHaveLength((2 + 5) * 2 * 2);
    for (const arm of ["pr", "baseline"] as const) {
      for (let iteration = 0; iteration < 2; iteration++) {
        const group = records.filter((r) => r.arm === arm && r.iteration === iteration);
        const others = group.filter((r) => !isInvariant(r)).map(span);
        const first = Math.min(...others.map((s) => s.start));
        const last = Math.max(...others.map((s) => s.end));
        const watcher = group.find((r) => r.name === INVARIANT_TEST)!;
        const sigtermOnly = group.find((r) => r.name === SIGTERM_INVARIANT_TEST)!;
        for (const invariant of [watcher, sigtermOnly]) {
          expect(invariant).toMatchObject({ result: "passed", attempt: 0 });
          expect(span(invariant).end).toBeGreaterThanOrEqual(last);
        }
        // The one that says it watches (its ready file) was watching before the first other test began.
        expect(span(watcher).start).toBeLessThanOrEqual(first);
        // The stop file ends the one that watches it at once; the other only hears SIGTERM after the grace.
        expect(span(watcher).end - last).toBeLessThan(graceMs / 2);
        expect(span(sigtermOnly).end - last).toBeGreaterThanOrEqual(graceMs - 50);
      }
    }
    // Parallelism 1 held for the ordinary tests while the invariants ran beside them.
    const ordinary = records.filter((r) => !isInvariant(r)).map(span);
    ordinary.sort((a, b) => a.start - b.start);
    for (let i = 1; i < ordinary.length; i++)
      expect(ordinary[i]!.start).toBeGreaterThanOrEqual(ordinary[i - 1]!.end);
    expect(records.filter((r) => r.name === SERIAL_TEST).every((r) => r.ranAlone === "serial")).toBe(true);
  });

  it("records an invariant that never wraps up as failed after its grace, without holding up the run", async () => {
    const started = Date.now();
    const { records, outcome } = await run("stuck", without([INVARIANT_TEST, SIGTERM_INVARIANT_TEST]), {
      iterations: 1,
      parallel: 4,
      invariantGraceMs: 300,
      invariantReadyMs: 300,
      // It ignores SIGTERM too: SIGABRT ends it this long after.
      interruptGraceMs: 300,
    });
    expect(outcome.status).toBe("completed");
    const stuck = records.filter((r) => r.name === STUCK_INVARIANT_TEST);
    // Once per arm, never retried: a rerun would watch another stretch of time.
    expect(stuck).toHaveLength(2);
    for (const record of stuck) {
      expect(record.result).toBe("failed");
      expect(record.error).toMatch(
        /did not report within its 0.3 s grace after the iteration's other tests finished/,
      );
    }
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("runs for their own default duration when the iteration has nothing else to span", async () => {
    const { records } = await run("alone", without([]), {
      iterations: 1,
      parallel: 2,
      focus: "pod network should stay reachable",
      env: { ...env, SAMPLE_EXT_TIME_SCALE: "1", NETSTRESS_INVARIANT_DURATION_SECONDS: "0.4" },
    });
    expect(records.map((r) => [r.name, r.result])).toEqual([
      [INVARIANT_TEST, "passed"],
      [INVARIANT_TEST, "passed"],
    ]);
    for (const record of records) expect(span(record).end - span(record).start).toBeGreaterThanOrEqual(350);
  });
});
