import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LABELS } from "@netstress/core/kube/netstress-labels.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { FakeImage, FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import {
  farmConfig,
  farmExecutor,
  REGRESSED,
  shardOf,
  STABLE,
  startFarmClusters,
  writeFarmImages,
} from "./farm-fixture.ts";

let dir: { path: string; remove: () => Promise<void> };
let images: Record<string, FakeImage>;
let east: FakeKubeApi;
let west: FakeKubeApi;

beforeAll(async () => {
  dir = await tempDir();
  images = await writeFarmImages(join(dir.path, "images"));
  [east, west] = (await startFarmClusters({ names: ["east", "west"], images })) as [FakeKubeApi, FakeKubeApi];
});
afterAll(async () => {
  await Promise.all([east?.stop(), west?.stop()]);
  await dir.remove();
});

const readResults = async (path: string): Promise<ResultRecord[]> =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ResultRecord);

const jobsIn = (api: FakeKubeApi) => api.store.list("jobs", "netstress", () => true).items;

describe("the farm executor", () => {
  it("runs each iteration as a Job of the real runner, spread over clusters, collects every record and cleans up", async () => {
    const config = farmConfig([
      { name: "east", api: east },
      { name: "west", api: west },
    ]);
    const farm = farmExecutor(config, inject("redisUrl"), { runContext: async () => ({ pr: 7 }) });
    const seen: ResultRecord[] = [];
    const labelsSeen = new Set<string>();
    const offs = [east, west].map((api) =>
      api.store.subscribe((e) => {
        if (e.resource === "jobs" && e.type === "ADDED")
          labelsSeen.add(JSON.stringify(e.object.metadata.labels));
      }),
    );
    try {
      const shard = shardOf({ count: 2 });
      const outcome = await farm.executor.execute({
        shard,
        outDir: join(dir.path, "happy"),
        signal: new AbortController().signal,
        onRecord: (r) => seen.push(r),
      });
      expect(outcome).toMatchObject({ status: "completed", records: 8 });
      if (outcome.status !== "completed") return;
      const records = await readResults(outcome.resultsPath);
      expect(records).toHaveLength(8);
      expect(seen).toHaveLength(8);
      // Every iteration ran both arms once; the PR's regression shows, the baseline is clean.
      for (const iteration of [0, 1]) {
        for (const arm of ["pr", "baseline"]) {
          const names = records.filter((r) => r.iteration === iteration && r.arm === arm).map((r) => r.name);
          expect(names.sort()).toEqual([REGRESSED, STABLE].sort());
        }
      }
      expect(records.filter((r) => r.result === "failed").map((r) => [r.arm, r.name])).toEqual(
        Array(2).fill(["pr", REGRESSED]),
      );
      // Two clusters of equal capacity share the run; every Job was created once and is gone now.
      expect(east.jobCreations().size).toBe(1);
      expect(west.jobCreations().size).toBe(1);
      for (const api of [east, west]) {
        expect([...api.jobCreations().values()].every((n) => n === 1)).toBe(true);
        expect(jobsIn(api)).toHaveLength(0);
        await expect.poll(() => api.store.list("pods", "netstress", () => true).items).toHaveLength(0);
      }
      const labels = [...labelsSeen].map((l) => JSON.parse(l) as Record<string, string>);
      expect(
        labels.every((l) => l[LABELS.pr] === "7" && l[LABELS.arch] === "amd64" && l[LABELS.arms] === "both"),
      ).toBe(true);
      // Per iteration, besides the watches: create its Secret (the stream key) and its Job, make the
      // Job the Secret's owner, read the log, delete both.
      const perShard = [
        "POST secrets",
        "POST jobs",
        "PUT secrets",
        "GET pods/log",
        "DELETE jobs",
        "DELETE secrets",
      ];
      const calls = [east, west].flatMap((api) => [...api.stats.calls]);
      expect(calls.filter(([k]) => perShard.includes(k)).reduce((sum, [, n]) => sum + n, 0)).toBe(12);
      // Besides them, per cluster one list of Jobs and one of pods when the watches start: the
      // Secret's owner is the uid the Job's create answered, not a read of the Job.
      expect(calls.filter(([k]) => !perShard.includes(k)).sort()).toEqual([
        ["GET jobs", 1],
        ["GET jobs", 1],
        ["GET pods", 1],
        ["GET pods", 1],
      ]);
    } finally {
      offs.forEach((off) => off());
      await farm.close();
    }
  });

  it("puts the iterations of a shard that requires capabilities only on clusters offering them all, and names what is offered when none does", async () => {
    const config = farmConfig([
      { name: "east", api: east, capabilities: ["ipv6", "ovn-ic"] },
      { name: "west", api: west },
    ]);
    const farm = farmExecutor(config, inject("redisUrl"));
    const created = () => [east, west].map((api) => [...api.jobCreations().keys()]);
    try {
      const [eastBefore, westBefore] = created();
      const outcome = await farm.executor.execute({
        shard: { ...shardOf({ count: 3 }), capabilities: ["ipv6"] },
        outDir: join(dir.path, "ipv6"),
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 12 });
      const [eastAfter, westAfter] = created();
      expect(eastAfter!.length - eastBefore!.length).toBe(3);
      expect(westAfter).toEqual(westBefore);

      const refused = await farm.executor.execute({
        shard: { ...shardOf({ count: 1 }), capabilities: ["ipv6", "sriov"] },
        outDir: join(dir.path, "sriov"),
        signal: new AbortController().signal,
      });
      expect(refused.status).toBe("failed");
      expect(refused.status === "failed" && refused.reason).toContain(
        "no build-farm cluster can run amd64 + ipv6 + sriov shards",
      );
      expect(refused.status === "failed" && refused.reason).toContain(
        "Capabilities offered: east [ipv6, ovn-ic]",
      );
      expect(created()).toEqual([eastAfter, westAfter]);
    } finally {
      await farm.close();
    }
  });
  it("reserves a shard's capacity whole or not at all, and its Jobs run on what was reserved", async () => {
    const config = farmConfig([{ name: "east", api: east, capacity: 2 }]);
    const farm = farmExecutor(config, inject("redisUrl"));
    const other = farmExecutor(config, inject("redisUrl"), { prefix: farm.prefix });
    const leasesOnEast = () => farm.redis.zrange(`${farm.prefix}:farm:leases:east`, 0, -1);
    try {
      const held = await other.executor.reserveCapacity!({
        shard: shardOf({ count: 1 }),
        jobs: 1,
        signal: new AbortController().signal,
      });
      const shard = shardOf({ count: 2 });
      let reserved = false;
      const reserving = farm.executor.reserveCapacity!({
        shard,
        jobs: 2,
        signal: new AbortController().signal,
      }).then((r) => {
        reserved = true;
        return r;
      });
      // One slot is free, two are wanted: the shard waits holding none, not even for a moment.
      const seen = new Set<number>();
      for (const until = Date.now() + 700; Date.now() < until;) seen.add((await leasesOnEast()).length);
      expect(reserved).toBe(false);
      expect([...seen]).toEqual([1]);
      await held.release();
      const reservation = await reserving;
      const names = (await leasesOnEast()).sort();
      expect(names).toHaveLength(2);
      const outcome = await farm.executor.execute({
        shard,
        outDir: join(dir.path, "reserved"),
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ status: "completed", records: 8 });
      // The Jobs ran under the reserved leases' names.
      expect(names.every((name) => east.jobCreations().has(name))).toBe(true);
      await reservation.release();
      expect(await leasesOnEast()).toEqual([]);
    } finally {
      await other.close();
      await farm.close();
    }
  });
});
