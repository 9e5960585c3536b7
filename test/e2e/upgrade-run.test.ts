import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { startFakeHive, type FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import {
  startSimulatedCluster,
  type SimulatedCluster,
} from "@netstress/testbed/sim/start-simulated-cluster.ts";
import { botObjects, seedHub, writeHiveFarmConfig } from "../clusters/hive-fixture.ts";
import { CLUSTER_API_TESTS, clusterApiExtension } from "../helpers/cluster-api-extension.ts";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload, OWNER, REPO } from "../helpers/github-payloads.ts";
import { startTestBot, type TestBot } from "../helpers/github-test-bot.ts";
import { startReleaseBotBed, type ReleaseBotBed } from "../helpers/release-bot-bed.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";

const NIGHTLY = "4.22.0-0.nightly-2026-12-03-040000";
const OLDER = "4.21.0-0.nightly-2026-11-20-000000";
const UPGRADE_MS = 300;

let bed: ReleaseBotBed;
let hive: FakeHive;
let t: TestBot | undefined;
/** Each release's payload by digest, as the registry has it. */
const pinned = new Map<string, string>();
/** Pre-installed clusters running the older release, two per arm. */
const preinstalled: SimulatedCluster[] = [];

beforeAll(async () => {
  bed = await startReleaseBotBed();
  pinned.set(NIGHTLY, await bed.publish("4.22.0-0.nightly", NIGHTLY));
  pinned.set(OLDER, await bed.publish("4.21.0-0.nightly", OLDER));
  // The PR's build of the component, which the bot puts into the released payload for the PR arm.
  await pushPayload({
    url: bed.registry.url,
    host: bed.registry.host,
    repository: "netstress/pr-images",
    name: "pr",
    arches: ["amd64"],
    components: [{ tag: "cluster-api", binary: clusterApiExtension(), commit: "d".repeat(40) }],
  });
  hive = await startFakeHive({ installMs: 100, clusterFor: () => ({ upgradeMs: UPGRADE_MS }) });
  seedHub(hive, { poolSize: 4, releaseImage: pinned.get(OLDER)! });
  for (let i = 0; i < 4; i++)
    preinstalled.push(
      await startSimulatedCluster({
        arch: "amd64",
        payload: pinned.get(OLDER)!,
        upgradeMs: UPGRADE_MS,
        name: `static-${i}`,
      }),
    );
}, 120_000);
afterEach(async () => {
  await t?.stop();
  t = undefined;
});
afterAll(async () => {
  await Promise.all([...preinstalled.map((c) => c.stop()), hive?.stop(), bed?.stop()]);
});

/** The real bot: the run planned from the payloads in the registry, executed here against its clusters. */
async function startUpgradeBot(staticClusters: readonly SimulatedCluster[]): Promise<TestBot> {
  const configPath = join(bed.dir, `farm-${staticClusters.length}.yaml`);
  await writeHiveFarmConfig({
    path: configPath,
    farmKubeconfig: bed.farmApi.kubeconfigPath,
    hubKubeconfig: hive.hub.kubeconfigPath,
    readySeconds: 60,
    before: staticClusters.length
      ? [
          {
            type: "static",
            name: "static",
            upgradeSeconds: 60,
            // A PR run's arms: the source must say it reinstalls clusters PR code has had.
            reinstall: true,
            clusters: staticClusters.map((c) => ({
              name: c.name,
              arch: c.arch,
              kubeconfig: c.kubeconfigPath,
            })),
          },
        ]
      : [],
  });
  const options = bed.botOptions(configPath);
  return startTestBot({
    ...options,
    github: { members: ["alice"] },
    registry: {
      ...options.registry!,
      prPayloadRepository: `${bed.registry.host}/netstress/pr-payloads`,
      releases: {
        repositories: [`${bed.registry.host}/ocp/release`],
        streams: [{ name: "4.21", stream: "4.21.0-0.nightly" }],
      },
    },
    settings: {
      localArches: ["amd64"],
      defaults: {
        payload: `${bed.registry.host}/ocp/release:${NIGHTLY}`,
        prImage: `${bed.registry.host}/netstress/pr-images:component-{tag}`,
        tags: ["cluster-api"],
      },
    },
  });
}

describe.each([
  { source: "static", clusters: () => preinstalled },
  { source: "hive", clusters: () => [] },
])("an upgrade run on $source clusters, through the real bot", ({ source, clusters }) => {
  it("starts every cluster at the upgrade-from release, upgrades each once to its arm's payload, and reports the disruption of both arms", async () => {
    t = await startUpgradeBot(clusters());
    await t.deliver(
      "issue_comment",
      commentPayload({ body: "/test network-stress upgrade-from=4.21 iterations=2" }),
    );
    const check = await eventually(
      () => [...t!.github.latestCheckRuns().values()].find((c) => c.status === "completed"),
      90_000,
    );
    const [run] = await t.store.listForPullRequest(OWNER.login, REPO, 7);
    const from = pinned.get(OLDER)!;
    const target = pinned.get(NIGHTLY)!;
    // The PR arm's payload is the release with the PR's build: an assembled payload of its own.
    expect(run!.payloads).toMatchObject({ upgradeFrom: from, baseline: target });
    expect(run!.payloads!.pr).toMatch(new RegExp(`^${bed.registry.host}/netstress/pr-payloads@sha256:`));

    // Two clusters per arm from the source, each started at the older release and upgraded once to its arm's payload.
    expect(run!.clusters).toHaveLength(4);
    for (const held of run!.clusters!) expect(held).toMatchObject({ source, payload: from });
    expect(run!.results, run!.reason).toHaveLength(1);
    const records = (await readFile(run!.results[0]!.resultsPath, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ResultRecord);
    const upgrades = records.filter((r) => r.name === CLUSTER_API_TESTS.upgrade);
    const passed = upgrades.filter((r) => r.result === "passed");
    const upgraded = (arm: "pr" | "baseline") => [
      arm,
      `upgraded the cluster from ${from} to ${run!.payloads![arm]}`,
    ];
    expect(passed.map((r) => [r.arm, r.output]).sort()).toEqual(
      [upgraded("baseline"), upgraded("baseline"), upgraded("pr"), upgraded("pr")].sort(),
    );
    expect(new Set(passed.map((r) => r.cluster)).size).toBe(4);
    for (const held of run!.clusters!) {
      const cluster = preinstalled.find((c) => held.id === `static/${c.name}`);
      if (cluster) expect(cluster.payload()).toBe(run!.payloads![held.arm]);
    }

    // The other tests of an iteration run before its upgrade, on the start release: each record names
    // the payload its cluster ran, as the test itself read it from ClusterVersion.
    const answers = records.filter((r) => r.name === CLUSTER_API_TESTS.answers);
    expect(answers).toHaveLength(4);
    for (const record of answers) {
      expect(record.payload).toBe(from);
      expect(record.output).toBe(`the API server answered; the cluster runs ${from}`);
    }

    // The check run's disruption section: the upgrade test's path, with samples of both arms.
    const output = check.output as { summary: string; text?: string };
    const markdown = `${output.summary}\n${output.text ?? ""}`;
    expect(markdown).toContain("**Disruption** (per test, path and connection)");
    const row = markdown.split("\n").find((line) => line.includes("pod-to-apiserver new"));
    expect(row).toBeDefined();
    const cells = row!.split(" | ");
    expect(cells[3]).toMatch(/^P50 0 s, P99 0 s \(max of 2\)$/);
    expect(cells[4]).toMatch(/^P50 0 s, P99 0 s \(max of 2\)$/);
    await eventually(() => botObjects(hive).length === 0, 30_000);
  }, 150_000);
});
