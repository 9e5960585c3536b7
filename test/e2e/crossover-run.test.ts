import { readFile } from "node:fs/promises";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import type { FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import { botObjects, PR, RELEASED } from "../clusters/hive-fixture.ts";
import { bothArmsPlan } from "../helpers/both-arms-plan.ts";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload, OWNER, REPO } from "../helpers/github-payloads.ts";
import type { TestBot } from "../helpers/github-test-bot.ts";
import { startHiveBotBed, type HiveBotBed } from "../helpers/hive-bot-bed.ts";
import { weatherExecutor } from "../helpers/weather-executor.ts";

const REGRESSED = "[sig-network] NodePort service should be reachable from the host network";
const MONITOR = "[sig-network][Invariant] pod network should stay reachable all through the iteration";
const TESTS = [
  REGRESSED,
  ...Array.from({ length: 5 }, (_, i) => `[sig-network] connectivity check ${i + 1} should succeed`),
];

let redis: Redis;
let bed: HiveBotBed | undefined;
let t: TestBot | undefined;

beforeAll(() => {
  redis = new Redis(inject("redisUrl"));
});
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await bed?.stop();
  bed = undefined;
});
afterAll(async () => {
  await redis?.quit();
});

/** The bot on the bed's Hive, its PR arm on a payload of its own (PR), an adaptive repository configuration. */
function startCrossoverBot(config: string[], executed: { shards: number; executions: number }) {
  return bed!.startBot({
    github: { members: ["alice"], config: ["mode: adaptive", ...config].join("\n") },
    resolvePlan: bothArmsPlan({ pr: PR, baseline: RELEASED }),
    executor: weatherExecutor({
      tests: [...TESTS, MONITOR],
      regressed: REGRESSED,
      payload: RELEASED,
      executed,
    }),
    analyze: createRunAnalyzer({
      history: createHistoryStore({ redis, prefix: `crossover-${Date.now()}` }),
      log: pino({ level: "silent" }),
    }),
  });
}

/** Every simulated cluster's ClusterVersion history as last seen (clusters are torn down once given back). */
function watchHistories(hive: FakeHive): {
  histories: Map<string, { state: string; image: string }[]>;
  stop(): void;
} {
  const histories = new Map<string, { state: string; image: string }[]>();
  const timer = setInterval(() => {
    for (const cluster of hive.clusters()) {
      const version = cluster.api.store.get("clusterversions", "", "version");
      const history = (version?.status as { history?: { state: string; image: string }[] } | undefined)
        ?.history;
      if (history)
        histories.set(
          cluster.name,
          history.map(({ state, image }) => ({ state, image })),
        );
    }
  }, 50);
  return { histories, stop: () => clearInterval(timer) };
}

const completedCheck = () =>
  eventually(() => [...t!.github.latestCheckRuns().values()].find((c) => c.status === "completed"), 300_000);

describe("an adaptive run whose PR payload differs from the released one, on clusters from a simulated Hive", () => {
  it("runs a crossover by upgrade: finds the planted regression, stops clean tests early, and the hub's clusters show their upgrades", async () => {
    bed = await startHiveBotBed({ installMs: 100, poolSize: 4, clusterFor: () => ({ upgradeMs: 200 }) });
    const watch = watchHistories(bed.hive);
    const executed = { shards: 0, executions: 0 };
    t = await startCrossoverBot(
      ['target: "0.02:0.52"', "budget: 300 iterations", "limits: { max_iterations: 300 }"],
      executed,
    );
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    const check = await completedCheck();
    watch.stop();
    const output = check.output as { title: string; summary: string };
    expect(check.conclusion, output.summary).toBe("failure");
    expect(output.title).toMatch(/^Regression in 1 test\(s\) — decided in \d+ batch\(es\)/);
    expect(output.summary).toMatch(/^\*\*Adaptive run \(crossover by upgrade\)\*\* — 1 regression\(s\)/);
    expect(output.summary).toMatch(/Upgraded to the PR payload: \d+ cluster\(s\) in [\d.]+ minutes in all/);
    expect(output.summary).toMatch(/cluster-hours/);

    // A row per test with why it stopped; clean ones stopped before the regression was decided, or with it.
    const row = (name: string) =>
      output.summary.split("\n").find((line) => line.startsWith("| ") && line.includes(name.slice(15)));
    expect(row(REGRESSED)).toMatch(/\| regression \| decided regression after batch \d+ \|/);
    const clean = TESTS.slice(1).map((name) => row(name)!);
    for (const line of clean) expect(line).toMatch(/\| clean \| decided clean after batch \d+ \|/);
    const executions = (line: string) => Number(/\| (\d+) \/ \d+ \|/.exec(line)![1]);
    expect(Math.min(...clean.map(executions))).toBeLessThan(executions(row(REGRESSED)!));

    const run = (await t.store.listForPullRequest(OWNER.login, REPO, 7))[0]!;
    expect(run.adaptive!.design).toBe("crossover by upgrade");
    const upgraded = run.adaptive!.upgrades!.filter((u) => !u.failed).map((u) => u.id);
    expect(upgraded.length).toBeGreaterThan(1);
    // Every cluster was claimed on the released payload but those that confirmed the suspect: new
    // on the PR payload, never upgraded. The hub saw each upgraded one complete the PR payload.
    const confirming = run.clusters!.filter((held) => held.payload === PR);
    expect(confirming.length).toBeGreaterThan(0);
    for (const held of confirming) expect(upgraded).not.toContain(held.id);
    for (const held of run.clusters!.filter((c) => !confirming.includes(c)))
      expect(held).toMatchObject({ payload: RELEASED, shared: true });
    expect(run.adaptive!.decision!.tests.find((test) => test.name === REGRESSED)!.reason).toMatch(
      /confirmed on \d+ pair\(s\) of new clusters never upgraded/,
    );
    expect(output.summary).toContain("is one only once pairs of new clusters never upgraded");
    const moved = [...watch.histories.values()].filter(
      (history) => history[0]?.image === PR && history.some((entry) => entry.image === RELEASED),
    );
    expect(moved).toHaveLength(upgraded.length);
    for (const history of moved)
      expect(history).toEqual([
        { state: "Completed", image: PR },
        { state: "Completed", image: RELEASED },
      ]);
    expect(run.clusters!.every((c) => c.releasedAt)).toBe(true);
    // The HTML report names the design and the upgraded clusters too.
    const html = await readFile(run.reportPath!, "utf8");
    expect(html).toContain("Adaptive run (crossover by upgrade): why each test stopped");
    expect(html).toMatch(/Upgraded to the PR payload: \d+ cluster\(s\)/);
    await eventually(() => botObjects(bed!.hive).length === 0, 30_000);
  }, 360_000);

  it("keeps within a Hive quota of 4 clusters, the ones waiting for their upgrade included, and still finds the regression", async () => {
    bed = await startHiveBotBed({
      installMs: 100,
      poolSize: 4,
      maxClusters: 4,
      clusterFor: () => ({ upgradeMs: 200 }),
    });
    t = await startCrossoverBot(
      ['target: "0.02:0.52"', "budget: 300 iterations", "limits: { max_iterations: 300 }"],
      { shards: 0, executions: 0 },
    );
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    // A batch that asked for 4 new clusters beside 4 waiting ones would wait for quota its own
    // clusters hold, and the run would never conclude.
    const check = await completedCheck();
    const output = check.output as { title: string; summary: string };
    expect(check.conclusion, output.summary).toBe("failure");
    expect(output.title).toMatch(/^Regression in 1 test\(s\)/);
    const run = (await t.store.listForPullRequest(OWNER.login, REPO, 7))[0]!;
    const held = run.clusters!.map((c) => [Date.parse(c.acquiredAt), Date.parse(c.releasedAt!)] as const);
    const most = Math.max(...held.map(([at]) => held.filter(([from, to]) => from <= at && at < to).length));
    expect(most).toBeLessThanOrEqual(4);
    await eventually(() => botObjects(bed!.hive).length === 0, 30_000);
  }, 360_000);

  it("gives back a cluster whose upgrade never completes, says why on the check run, and concludes", async () => {
    bed = await startHiveBotBed({
      installMs: 100,
      poolSize: 4,
      clusterFor: () => ({ upgradeMs: 3_600_000 }),
      upgradeSeconds: 1,
    });
    const executed = { shards: 0, executions: 0 };
    t = await startCrossoverBot(
      ['target: "0.02:0.52"', "budget: 60 iterations", "limits: { max_iterations: 60 }"],
      executed,
    );
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    const check = await completedCheck();
    const output = check.output as { title: string; summary: string };
    expect(check.conclusion, output.summary).toBe("neutral");
    expect(output.summary).toMatch(/Upgraded to the PR payload: 0 cluster\(s\)\./);
    expect(output.summary).toMatch(
      /hive\/\S+ not upgraded: the upgrade did not complete in 1 s \(given back\)\./,
    );
    const run = (await t.store.listForPullRequest(OWNER.login, REPO, 7))[0]!;
    const failed = run.adaptive!.upgrades!.filter((u) => u.failed);
    expect(failed.length).toBeGreaterThan(0);
    for (const upgrade of failed)
      expect(run.clusters!.find((c) => c.id === upgrade.id)!.releasedAt).toBeDefined();
    await eventually(() => botObjects(bed!.hive).length === 0, 30_000);
  }, 360_000);
});
