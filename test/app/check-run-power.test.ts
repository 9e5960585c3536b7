import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { powerLine } from "../../src/runs/power-line.ts";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload, OWNER, REPO } from "../helpers/github-payloads.ts";
import { controlledExecutor, type TestBot } from "../helpers/github-test-bot.ts";
import { startHiveBotBed, type HiveBotBed } from "../helpers/hive-bot-bed.ts";

let bed: HiveBotBed;
let t: TestBot | undefined;

beforeAll(async () => {
  bed = await startHiveBotBed({ installMs: 100, poolSize: 3 });
});
afterEach(async () => {
  await t?.stop();
  t = undefined;
});
afterAll(async () => {
  await bed?.stop();
});

/** The bot with clusters under test from the simulated Hive and a repository configuration. */
function startBot(config: string[]): Promise<TestBot> {
  return bed.startBot({
    github: { members: ["alice"], config: config.join("\n") },
    executor: controlledExecutor(["amd64"]).executor,
  });
}

/** The summary of the first queued check run that says what the run can see. */
async function queuedPowerSummary(bot: TestBot): Promise<string> {
  return eventually(
    () =>
      bot.github
        .checkRunWrites()
        .map((w) => w.body as { status?: string; output?: { summary?: string } })
        .find((body) => body.status === "queued" && body.output?.summary?.includes("**Power**"))?.output!
        .summary,
    60_000,
  );
}

describe("the queued check run says what the run's design can see", () => {
  it("for a fixed run: its clusters × iterations per arm on separate clusters, and what the repository's target needs", async () => {
    t = await startBot(["iterations: 12", "clusters: 3", 'target: "0.02:0.32"']);
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    const summary = await queuedPowerSummary(t);

    const [run] = await t.store.listForPullRequest(OWNER.login, REPO, 7);
    expect(run!.power).toMatchObject({
      design: {
        kind: "separate",
        clustersPerArm: 3,
        iterationsPerCluster: 4,
        tests: 500,
        testsAssumed: true,
      },
      target: { from: 0.02, to: 0.32 },
    });
    expect(summary).toContain(`**Power** — ${powerLine(run!.power!)}`);
    expect(summary).toMatch(
      /This run can see (\+[\d.]+ points|no rise up to 100%) on a clean test, .* on a 2% flake, .* on a 10% flake with 80% power \(3 clusters × 4 iterations per arm, separate clusters, 500 tests assumed/,
    );
    expect(summary).toMatch(
      /; for 2% → 32% you need (\d+ clusters × 4 iterations per arm|more than 10 clusters per arm)/,
    );
  }, 120_000);

  it("for an adaptive run: its target in every test it decides, and what its budget would see as a fixed run", async () => {
    t = await startBot(["mode: adaptive", "budget: 30 iterations"]);
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    const summary = await queuedPowerSummary(t);

    const [run] = await t.store.listForPullRequest(OWNER.login, REPO, 7);
    // The decision step's first batch holds 3 shared clusters; 30 iterations per arm on them is 10 each.
    expect(run!.power?.design).toMatchObject({
      kind: "adaptive",
      clustersPerArm: 3,
      iterationsPerCluster: 10,
      budgetIterations: 30,
    });
    expect(summary).toContain(
      "This run can see 2% → 10% with 80% power in every test it decides within its budget of 30 iterations (adaptive: batches on 3 shared clusters",
    );
    expect(summary).toMatch(
      /for 2% → 10% you need every test decided before the budget is spent .*; spent as a fixed run of 10 iterations per arm on each of those clusters, the budget would see/,
    );
  }, 120_000);
});
