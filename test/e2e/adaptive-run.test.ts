import { readFile } from "node:fs/promises";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import { botObjects, RELEASED } from "../clusters/hive-fixture.ts";
import { eventually } from "../helpers/github-api.ts";
import { checkRunPayload, commentPayload, OWNER, REPO } from "../helpers/github-payloads.ts";
import { TEST_APP_ID, type TestBot } from "../helpers/github-test-bot.ts";
import { startHiveBotBed, type HiveBotBed } from "../helpers/hive-bot-bed.ts";
import { weatherExecutor } from "../helpers/weather-executor.ts";

const REGRESSED = "[sig-network] NodePort service should be reachable from the host network";
const MONITOR = "[sig-network][Invariant] pod network should stay reachable all through the iteration";
const TESTS = [
  REGRESSED,
  ...Array.from({ length: 9 }, (_, i) => `[sig-network] connectivity check ${i + 1} should succeed`),
];
const BUDGET_ITERATIONS = 40;

let bed: HiveBotBed;
let t: TestBot | undefined;
let redis: Redis;

beforeAll(async () => {
  bed = await startHiveBotBed({ installMs: 100, poolSize: 3 });
  redis = new Redis(inject("redisUrl"));
});
afterAll(async () => {
  await t?.stop();
  await bed?.stop();
  await redis?.quit();
});

/** The bot with clusters from the simulated Hive, an adaptive repository configuration and the real analysis. */
function startAdaptiveBot(
  config: string[],
  executed: { shards: number; executions: number },
): Promise<TestBot> {
  return bed.startBot({
    github: { members: ["alice"], config: ["mode: adaptive", ...config].join("\n") },
    executor: weatherExecutor({
      tests: [...TESTS, MONITOR],
      regressed: REGRESSED,
      payload: RELEASED,
      executed,
    }),
    analyze: createRunAnalyzer({
      history: createHistoryStore({ redis, prefix: `adaptive-${Date.now()}` }),
      log: pino({ level: "silent" }),
    }),
  });
}

describe("an adaptive run on clusters from a simulated Hive", () => {
  it("stops early on clean tests, finds the planted regression and tells on the check run why each test stopped", async () => {
    const executed = { shards: 0, executions: 0 };
    t = await startAdaptiveBot(['target: "0.02:0.32"', `budget: ${BUDGET_ITERATIONS} iterations`], executed);
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));

    const check = await eventually(
      () => [...t!.github.latestCheckRuns().values()].find((c) => c.status === "completed"),
      90_000,
    );
    const output = check.output as { title: string; summary: string };
    expect(check.conclusion).toBe("failure");
    expect(output.title).toMatch(/^Regression in 1 test\(s\) — decided in \d+ batch\(es\), \d+ executions/);

    // Fewer executions than a fixed run of the budget: every test and the monitor, both arms, 40 iterations.
    const fixed = BUDGET_ITERATIONS * 2 * (TESTS.length + 1);
    expect(executed.shards).toBeGreaterThan(1);
    expect(executed.executions).toBeLessThan(fixed);

    // A row per test: its name (escaped for Markdown), decision, why it stopped, executions, clusters, effect.
    const row = (name: string) =>
      output.summary.split("\n").find((line) => line.startsWith("| ") && line.includes(name.slice(15)));
    expect(output.summary).toMatch(/^\*\*Adaptive run \(shared clusters\)\*\* — 1 regression\(s\), 9 clean/);
    expect(row(REGRESSED)).toMatch(
      /\| regression \| decided regression after batch \d+ \| \d+ \/ \d+ \| 3 \| fails \+\d+(\.\d)? points more often in the PR/,
    );
    const clean = TESTS.slice(1).map((name) => row(name)!);
    for (const line of clean)
      expect(line).toMatch(
        /\| clean \| decided clean after batch \d+ \| \d+ \/ \d+ \| \d \| rules out a rise of \+30 points or more \|/,
      );
    // Clean tests stopped before the regression was decided, or with it: none ran every batch.
    const executions = (line: string) => Number(/\| (\d+) \/ \d+ \|/.exec(line)![1]);
    expect(Math.min(...clean.map(executions))).toBeLessThan(executions(row(REGRESSED)!));
    expect(output.summary).toMatch(/cluster-hours/);

    const run = (await t.store.listForPullRequest(OWNER.login, REPO, 7))[0]!;
    expect(run.adaptive?.batches.length).toBe(executed.shards);
    expect(run.clusters).toHaveLength(3);
    expect(run.clusters!.every((c) => c.shared && c.releasedAt)).toBe(true);
    // The HTML report the run's page serves gives every test's stopping reason too.
    const html = await readFile(run.reportPath!, "utf8");
    expect(html).toContain("why each test stopped");
    expect(html.match(/decided clean after batch \d+/g)).toHaveLength(9);
    expect(html).toMatch(/decided regression after batch \d+/);
    await eventually(() => botObjects(bed.hive).length === 0, 30_000);
    await t.stop();
    t = undefined;
  }, 120_000);

  it("ends neutral when its budget is spent undecided, and Run until decided goes on with the undecided tests alone", async () => {
    const executed = { shards: 0, executions: 0 };
    t = await startAdaptiveBot(["budget: 6 iterations"], executed);
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    const completed = () => [...t!.github.latestCheckRuns().values()].filter((c) => c.status === "completed");
    const first = await eventually(() => completed()[0], 90_000);
    expect(first.conclusion).toBe("neutral");
    expect((first.output as { title: string }).title).toMatch(
      /^Undecided — \d+ test\(s\) when the budget was spent/,
    );
    expect((first.actions as { label: string }[]).map((a) => a.label)).toEqual([
      "Re-run",
      "Run until decided",
    ]);
    const [parent] = await t.store.listForPullRequest(OWNER.login, REPO, 7);
    const undecided = parent!.adaptive!.decision!.tests.filter((test) => test.decision === "undecided");
    expect(undecided.length).toBeGreaterThan(0);

    await t.deliver(
      "check_run",
      checkRunPayload({
        action: "requested_action",
        runId: parent!.id,
        appId: TEST_APP_ID,
        identifier: "continue",
      }),
    );
    await eventually(() => completed().length === 2, 90_000);
    const child = (await t.store.listForPullRequest(OWNER.login, REPO, 7)).find((r) => r.id !== parent!.id)!;
    // It goes on after the parent's batch, with another budget, running only what was undecided.
    const own = child.adaptive!.batches.slice(parent!.adaptive!.batches.length);
    expect(own.length).toBeGreaterThan(0);
    expect(own[0]!.first).toBe(6);
    expect(new Set(own[0]!.tests)).toEqual(new Set(undecided.map((test) => test.name)));
    expect(child.adaptive!.decision!.spent).toBeGreaterThan(parent!.adaptive!.decision!.spent);
    await t.stop();
    t = undefined;
  }, 120_000);
});
