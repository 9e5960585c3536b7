import { describeOutcome } from "../analysis/iteration-outcome.ts";
import { failsTheRun } from "../analysis/fails-the-run.ts";
import type { Analysis, ArmAggregate, ArmCounts, TestVerdict } from "../analysis/types.ts";
import { renderJunitXml, type JunitTestcase } from "../ote/junit-xml.ts";

function iterationsWhere(aggregate: ArmAggregate | undefined, outcome: "flaked" | "failed"): number[] {
  if (!aggregate) return [];
  const found: number[] = [];
  aggregate.outcomes.forEach((bits, iteration) => {
    if (describeOutcome(bits) === outcome) found.push(iteration);
  });
  return found;
}

function describeArm(counts: ArmCounts, aggregate: ArmAggregate | undefined): string {
  const lines = [
    `${counts.runs} run(s): ${counts.passes} passed, ${counts.failures} failed, ${counts.flakes} flaked, ${counts.skips} skipped-only`,
  ];
  const flaked = iterationsWhere(aggregate, "flaked");
  if (flaked.length > 0)
    lines.push(`FLAKY: failed then passed on retry in iteration(s) ${flaked.join(", ")}`);
  const failed = iterationsWhere(aggregate, "failed");
  if (failed.length > 0) lines.push(`failed in iteration(s) ${failed.join(", ")}`);
  if (aggregate?.firstFailure)
    lines.push(
      `first failure (iteration ${aggregate.firstFailure.iteration}): ${aggregate.firstFailure.message}`,
    );
  return lines.join("\n");
}

function testcase(test: TestVerdict, arm: "pr" | "baseline"): JunitTestcase {
  const counts = arm === "pr" ? test.pr : test.baseline;
  const aggregate = arm === "pr" ? test.prAggregate : test.baselineAggregate;
  const flaky = counts.flakes > 0 ? `FLAKY in ${counts.flakes} of ${counts.runs} iteration(s)\n` : "";
  const systemOut = `${flaky}verdict: ${test.class} (${test.lifecycle}): ${test.reason}\n${describeArm(counts, aggregate)}`;
  return {
    name: test.name,
    classname: `${test.component}.${arm}`,
    time: aggregate && aggregate.executions > 0 ? aggregate.totalDurationMs / aggregate.executions / 1000 : 0,
    // A PR testcase fails exactly when the test fails the run.
    ...(arm === "pr" && failsTheRun(test)
      ? { failure: { message: `${test.class}: ${test.reason}`, body: systemOut } }
      : {}),
    ...(counts.runs === 0
      ? { skipped: { message: counts.skips > 0 ? "skipped in every iteration" : "not run in this arm" } }
      : {}),
    // A stable test has nothing to say beyond the summary; leaving it out keeps big reports small.
    ...(test.class === "stable" ? {} : { systemOut }),
  };
}

/**
 * JUnit of the verdicts: one testcase per test and arm (suites "pr" and "baseline"). Names stay the
 * test names, so history tools keep matching them; a flaky test's system-out starts with "FLAKY" and
 * lists the flaked iterations.
 */
export function renderVerdictJunit(analysis: Analysis): string {
  const arch = analysis.arch ?? "mixed";
  const suite = (arm: "pr" | "baseline") => {
    // Every test in both suites: one that an arm did not run is a skipped testcase there.
    const testcases = analysis.tests.map((test) => testcase(test, arm));
    return {
      name: `network-stress ${arm} (${arch})`,
      time: testcases.reduce((sum, tc) => sum + tc.time, 0),
      testcases,
    };
  };
  // A pooled history has no testcases of its own to show.
  return renderJunitXml(
    analysis.baselineKind === "history" ? [suite("pr")] : [suite("pr"), suite("baseline")],
  );
}
