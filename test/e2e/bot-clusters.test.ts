import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { botObjects, RELEASED } from "../clusters/hive-fixture.ts";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { controlledExecutor, type TestBot } from "../helpers/github-test-bot.ts";
import { startHiveBotBed, type HiveBotBed } from "../helpers/hive-bot-bed.ts";

let bed: HiveBotBed;
let t: TestBot | undefined;

beforeAll(async () => {
  bed = await startHiveBotBed({ installMs: 200 });
});
afterAll(async () => {
  await t?.stop();
  await bed?.stop();
});

describe("the bot with clusterSources in its farm configuration", () => {
  it("runs each arm of a PR run on clusters from Hive, keeps them through a bot restart, shows them on the check run and gives every one back", async () => {
    const { hive } = bed;
    const claims = new Set<string>();
    hive.hub.store.subscribe((event) => {
      if (event.resource === "clusterclaims" && event.type === "ADDED")
        claims.add(event.object.metadata.name);
    });
    const startBot = (control: ReturnType<typeof controlledExecutor>, queuePrefix?: string) =>
      bed.startBot({
        github: { members: ["alice"] },
        executor: control.executor,
        // The released payload has a pool on the hub: both arms' clusters are claims from it.
        ...(queuePrefix ? { settings: { queuePrefix } } : {}),
      });
    const first = controlledExecutor(["amd64"]);
    t = await startBot(first);
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));

    const before = await eventually(() => [...first.running.values()][0], 90_000);
    const ids = (input: typeof before.input) =>
      (["pr", "baseline"] as const)
        .flatMap((arm) => input.clusters?.[arm]?.map((l) => l.cluster.id) ?? [])
        .sort();
    expect(ids(before.input)).toHaveLength(4);

    // The bot restarts mid-run: the run resumes on the clusters it had, none installed or claimed again.
    const { queuePrefix } = t.settings;
    await t.stop();
    expect(botObjects(hive).filter((o) => o.startsWith("clusterclaims/"))).toHaveLength(4);
    const control = controlledExecutor(["amd64"]);
    t = await startBot(control, queuePrefix);
    const running = await eventually(() => [...control.running.values()][0], 90_000);
    expect(ids(running.input)).toEqual(ids(before.input));
    expect(claims.size).toBe(4);

    const { clusters } = running.input;
    for (const arm of ["pr", "baseline"] as const) {
      expect(clusters?.[arm]).toHaveLength(2);
      for (const lease of clusters![arm]!) {
        expect(lease.cluster).toMatchObject({ source: "hive", arch: "amd64", payload: RELEASED });
        expect(await lease.cluster.kubeconfig()).toContain("certificate-authority-data");
      }
    }

    await control.complete(running.input.shard.runId);
    const check = await eventually(
      () => [...t!.github.latestCheckRuns().values()].find((c) => c.status === "completed"),
      60_000,
    );
    const output = check.output as { summary: string; text?: string };
    expect(`${output.summary}\n${output.text ?? ""}`).toMatch(/Clusters under test\*\* — 4/);
    await eventually(() => botObjects(hive).length === 0, 30_000);
  }, 180_000);
});
