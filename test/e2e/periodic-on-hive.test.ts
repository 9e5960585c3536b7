import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { periodicsConfigSchema } from "../../src/config/periodics-config.ts";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { periodicRunRecord } from "../../src/periodic/periodic-run-record.ts";
import { redisKeys } from "../../src/redis/redis-keys.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { startFakeHive, type FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import { botObjects, leastPrivilegeHub, seedHub, writeHiveFarmConfig } from "../clusters/hive-fixture.ts";
import { CLUSTER_API_TESTS } from "../helpers/cluster-api-extension.ts";
import { eventually } from "../helpers/github-api.ts";
import { startTestBot, type TestBot } from "../helpers/github-test-bot.ts";
import { startReleaseBotBed, type ReleaseBotBed } from "../helpers/release-bot-bed.ts";

const STREAM = "4.22.0-0.nightly";
const NIGHTLY = "4.22.0-0.nightly-2026-12-03-040000";
/** Hive's durations × 0.003: the pool's hibernateAfter of 10m is 1.8 s, a claim's lifetime of 8h 86 s. */
const TIME_SCALE = 0.003;
const TEARDOWN_MS = 6000;

let bed: ReleaseBotBed;
let hive: FakeHive;
let t: TestBot | undefined;
/** The nightly's payload by digest, as the registry has it. */
let pinned: string;
/** What the hub's deployments went through from their install on: each one's powerStates in order. */
const powerStates = new Map<string, string[]>();
/** Each claim's cluster: the deployment named as its namespace. */
const claimed = new Map<string, string>();

beforeAll(async () => {
  bed = await startReleaseBotBed();
  pinned = await bed.publish(STREAM, NIGHTLY);
  hive = await startFakeHive({ installMs: 100, teardownMs: TEARDOWN_MS, timeScale: TIME_SCALE });
  hive.hub.store.subscribe((event) => {
    const namespace = event.object.spec?.namespace as string | undefined;
    if (event.resource === "clusterclaims" && namespace) claimed.set(event.object.metadata.name, namespace);
    if (event.resource !== "clusterdeployments") return;
    const state = event.object.status?.powerState as string | undefined;
    const seen = powerStates.get(event.object.metadata.name) ?? [];
    if (state && seen.at(-1) !== state) powerStates.set(event.object.metadata.name, [...seen, state]);
  });
  seedHub(hive, { poolSize: 2, hibernateAfter: "10m", releaseImage: pinned });
}, 120_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([hive?.stop(), bed?.stop()]);
});

describe("a release periodic on a Hive pool that hibernates its clusters, through the real bot", () => {
  it("resolves the stream's tag to its digest, runs on claims the least-privilege hub account made, resumed and kept running, and frees the quota only once Hive's teardown is over", async () => {
    const { kubeconfig: hubKubeconfig } = await leastPrivilegeHub(hive);
    const configPath = join(bed.dir, "farm.yaml");
    await writeHiveFarmConfig({
      path: configPath,
      farmKubeconfig: bed.farmApi.kubeconfigPath,
      hubKubeconfig,
      readySeconds: 60,
    });
    const periodics = periodicsConfigSchema.parse({
      // Every second: a fire after the run finds the payload stressed already.
      periodics: [{ name: "nightly", stream: STREAM, arches: ["amd64"], cron: "* * * * * *", iterations: 4 }],
    });
    const periodicsPath = join(bed.dir, "periodics.yaml");
    await writeFile(periodicsPath, JSON.stringify(periodics));

    const history = createHistoryStore({ redis: bed.redis, prefix: `periodic-hive-${Date.now()}` });
    t = await startTestBot({
      ...bed.botOptions(configPath, history),
      periodicsConfigPath: periodicsPath,
      settings: { localArches: ["amd64"] },
    });
    const id = periodicRunRecord({
      periodic: periodics.periodics[0]!,
      arch: "amd64",
      release: { name: NIGHTLY, pullSpec: `${bed.registry.host}/ocp/release:${NIGHTLY}` },
      now: new Date(),
    }).id;
    const run = await eventually(async () => {
      const found = await t!.store.get(id);
      return found?.state === "completed" && found;
    }, 90_000);

    // The quota, then the hub: a quota read as free while the hub still had the objects is a leak of the quota.
    const quotaKey = redisKeys(t.settings.queuePrefix).clusterLeases("hive");
    const freedEarly: string[] = [];
    const lingering = async () => {
      const held = await t!.redis.zcard(quotaKey);
      const objects = botObjects(hive).filter((o) => !o.startsWith("secrets/"));
      if (held === 0 && objects.length > 0) freedEarly.push(objects.join(", "));
      return { held, objects };
    };
    // Hive's finalizers keep the claims and deployments while their clusters are torn down: the quota stays taken.
    const atConclusion = await lingering();
    expect(atConclusion.objects.filter((o) => o.startsWith("clusterclaims/"))).toHaveLength(2);
    expect(atConclusion.held).toBe(2);
    await eventually(async () => {
      const { held, objects } = await lingering();
      return held === 0 && objects.length === 0;
    }, 30_000);
    expect(freedEarly).toEqual([]);
    // The hub let the bot's account do everything it did: its Role and Hive's grant to the claim's subjects sufficed.
    const refused = hive.hub.stats.authorizations.filter(
      (a) => a.user.endsWith(":netstress-bot") && !a.allowed,
    );
    expect(refused.map((a) => `${a.verb} ${a.resource} ${a.namespace}`)).toEqual([]);

    expect(run).toMatchObject({ subject: { kind: "periodic", release: NIGHTLY } });
    // Nothing to compare with yet; the run's results start the stream's history, under the digest it ran.
    expect(run.conclusion).toBe("neutral");
    expect(run.output?.title).toBe(`No history for ${STREAM} (amd64) yet — nothing compared`);
    const pooled = await history.readPayloadHistory({ stream: STREAM, arch: "amd64" });
    expect(pooled.map((p) => [p.release, p.payload, p.runs])).toEqual([[NIGHTLY, pinned, 1]]);
    // The release-controller's tag, pinned to its digest: the clusters run that digest.
    expect(run.payloads?.pr).toBe(pinned);
    expect(run.clusters).toHaveLength(2);
    for (const held of run.clusters!) {
      expect(held).toMatchObject({ arm: "pr", source: "hive", payload: pinned });
      expect(held.releasedAt).toBeDefined();
    }

    // Every iteration's test reached its cluster's API: each claimed cluster ran when its tests did.
    expect(run.results, run.reason).toHaveLength(1);
    const records = (await readFile(run.results[0]!.resultsPath, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ResultRecord)
      .filter((r) => r.name === CLUSTER_API_TESTS.answers);
    expect(records.filter((r) => r.result !== "passed").map((r) => `${r.cluster}: ${r.output}`)).toEqual([]);
    expect(records).toHaveLength(4);
    for (const record of records) expect(record.output).toContain(`the cluster runs ${pinned}`);
    expect(new Set(records.map((r) => r.cluster))).toEqual(new Set(run.clusters!.map((c) => c.id)));
    // Each claimed cluster had been hibernated by its pool and was resumed for its claim; none hibernated again.
    for (const held of run.clusters!) {
      const states = powerStates.get(claimed.get(held.id.slice("hive/".length))!);
      expect(states?.slice(0, 2), held.id).toEqual(["Running", "Hibernating"]);
      expect(
        states?.slice(2).every((s) => s !== "Hibernating"),
        held.id,
      ).toBe(true);
    }
  }, 150_000);
});
