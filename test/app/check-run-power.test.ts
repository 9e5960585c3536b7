import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { powerLine } from "../../src/runs/power-line.ts";
import { startFakeHive, type FakeHive } from "../../src/sim/start-fake-hive.ts";
import { startFakeKubeApi, type FakeKubeApi } from "../../src/sim/start-fake-kube-api.ts";
import { RELEASED, seedHub, writeHiveFarmConfig } from "../clusters/hive-fixture.ts";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload, OWNER, REPO } from "../helpers/github-payloads.ts";
import { controlledExecutor, startTestBot, type TestBot } from "../helpers/github-test-bot.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let hive: FakeHive;
let farmApi: FakeKubeApi;
let dir: Awaited<ReturnType<typeof tempDir>>;
let t: TestBot | undefined;

beforeAll(async () => {
  hive = await startFakeHive({ installMs: 100 });
  seedHub(hive, { poolSize: 3 });
  farmApi = await startFakeKubeApi();
  dir = await tempDir("netstress-check-run-power-");
});
afterEach(async () => {
  await t?.stop();
  t = undefined;
});
afterAll(async () => {
  await Promise.all([hive?.stop(), farmApi?.stop()]);
  await dir?.remove();
});

/** The bot with clusters under test from the simulated Hive and a repository configuration. */
async function startBot(config: string[]): Promise<TestBot> {
  const configPath = join(dir.path, "farm.yaml");
  await writeHiveFarmConfig({
    path: configPath,
    farmKubeconfig: farmApi.kubeconfigPath,
    hubKubeconfig: hive.hub.kubeconfigPath,
    readySeconds: 120,
  });
  return startTestBot({
    github: { members: ["alice"], config: config.join("\n") },
    executor: controlledExecutor(["amd64"]).executor,
    farm: { configPath, clusterTiming: { pollMs: 100 } },
    // Both arms on the released payload: the PR changes test binaries only.
    resolvePlan: async ({ run }) => ({
      kind: "ready",
      plan: {
        arch: run.arch,
        arms: (["pr", "baseline"] as const).map((arm) => ({
          arm,
          components: [{ component: "ovn-kubernetes", binary: "/nonexistent" }],
        })),
      },
    }),
    settings: { defaults: { payload: RELEASED, tags: [] } },
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
