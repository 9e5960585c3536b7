import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QuotaExceeded } from "../../src/app/quota-exceeded.ts";
import { startStressRuns, type StressRunsRequest } from "../../src/app/start-stress-runs.ts";
import { DEFAULT_QUOTAS } from "../../src/config/bot-settings.ts";
import { redisKeys } from "../../src/redis/redis-keys.ts";
import { countRedisRoundTrips } from "../helpers/count-redis-round-trips.ts";
import { HEAD_SHA, INSTALLATION_ID } from "../helpers/github-payloads.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";

let env: Awaited<ReturnType<typeof testRunDeps>>;
beforeEach(async () => {
  env = await testRunDeps();
});
afterEach(async () => env.close());

const OTHER_INSTALLATION = INSTALLATION_ID + 1;

/** A /test of PR 7 with some iterations (another count: another request), by delivery. */
const request = (iterations: number, deliveryId: string): StressRunsRequest => ({
  target: {
    installationId: INSTALLATION_ID,
    owner: { login: "openshift", type: "Organization" },
    repo: "ovn-kubernetes",
    pr: 7,
    privateRepository: false,
  },
  headSha: HEAD_SHA,
  arches: ["amd64"],
  options: { iterations, baseline: "payload" },
  source: runRecord().source,
  trigger: { kind: "comment", actor: "alice", deliveryId },
  slot: "1",
});

/** Active runs of another installation's PRs, each its own request. */
async function otherInstallationRuns(count: number) {
  for (let i = 0; i < count; i++) {
    await env.deps.store.create(runRecord({ subject: { installationId: OTHER_INSTALLATION, pr: 100 + i } }));
  }
}

describe("an installation's active runs", () => {
  it("are counted by admission from the installation's own set: no scan, no read of other installations' runs", async () => {
    const deps = { ...env.deps, quotas: { ...DEFAULT_QUOTAS, activeRunsPerInstallation: 1 } };
    await otherInstallationRuns(20);
    await startStressRuns(deps, request(3, "first"));
    const trips = countRedisRoundTrips(env.redis);

    await expect(startStressRuns(deps, request(4, "second"))).rejects.toThrow(QuotaExceeded);

    const commands = trips.trips.flat();
    expect(commands).not.toContain("SCAN");
    // The installation's one active run is the only record read.
    expect(commands.filter((c) => c === "GET" || c === "MGET")).toEqual(["MGET"]);
  });

  it("leave the set when they conclude, and a conclusion makes room under the quota", async () => {
    const deps = { ...env.deps, quotas: { ...DEFAULT_QUOTAS, activeRunsPerInstallation: 1 } };
    const [first] = await startStressRuns(deps, request(3, "first"));
    await env.deps.store.apply(first!.run.id, {
      type: "concluded",
      conclusion: "cancelled",
      reason: "aborted",
    });

    const [second] = await startStressRuns(deps, request(4, "second"));

    expect(second).toMatchObject({ created: true });
    expect(await env.redis.smembers(redisKeys(env.prefix).installationActiveRuns(INSTALLATION_ID))).toEqual([
      second!.run.id,
    ]);
  });

  it("saved by a version that kept no sets are found on first use, so none escapes its quota", async () => {
    const deps = { ...env.deps, quotas: { ...DEFAULT_QUOTAS, activeRunsPerInstallation: 2 } };
    const keys = redisKeys(env.prefix);
    const older = [runRecord(), runRecord({ subject: { pr: 8 } })];
    for (const run of older) await env.deps.store.create(run);
    await otherInstallationRuns(3);
    // What an older version left: runs and their dedupe keys, no sets.
    await env.redis.del(
      keys.installationActiveRuns(INSTALLATION_ID),
      keys.installationActiveRuns(OTHER_INSTALLATION),
      keys.activeRunSetsBuilt,
    );

    await expect(startStressRuns(deps, request(5, "new"))).rejects.toThrow(
      "this installation has 2 active run(s), at most 2",
    );
    expect((await env.deps.store.listActiveOfInstallation(INSTALLATION_ID)).map((r) => r.id).sort()).toEqual(
      older.map((r) => r.id).sort(),
    );
    expect(await env.deps.store.listActiveOfInstallation(OTHER_INSTALLATION)).toHaveLength(3);
  });
});
