// One payload identity: every payload a run installs or compares is pinned to a digest by the
// resolve stage, and clusters, records and history speak of that digest, never of a tag.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { periodicsConfigSchema } from "../../src/config/periodics-config.ts";
import { createReleaseController } from "../../src/payload/release-controller.ts";
import { periodicRunRecord } from "../../src/periodic/periodic-run-record.ts";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { processExecute } from "../../src/queue/process-execute.ts";
import { processResolve } from "../../src/queue/process-resolve.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import type { RunRecord } from "../../src/runs/run-record.ts";
import type { ExecuteShardInput, ShardExecutor } from "../../src/runs/shard-executor.ts";
import {
  startFakeReleaseController,
  type FakeReleaseController,
} from "@netstress/testbed/sim/start-fake-release-controller.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { runMachinery } from "../helpers/run-machinery.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { testClusterProvider, type TestClusterProvider } from "../helpers/test-cluster-provider.ts";

const arch = hostArch();
const NIGHTLY = "4.22.0-0.nightly-2026-11-30-123456";
const OLDER = "4.21.0-0.nightly-2026-11-01-000000";
let server: RegistryServer;
let releaseController: FakeReleaseController;
let dir: Awaited<ReturnType<typeof tempDir>>;
/** Each release's payload by digest, as the registry has it. */
const pinned = new Map<string, string>();

beforeAll(async () => {
  dir = await tempDir("netstress-payload-identity-");
  server = await startRegistry();
  releaseController = await startFakeReleaseController();
  for (const [stream, name] of [
    ["4.22.0-0.nightly", NIGHTLY],
    ["4.21.0-0.nightly", OLDER],
  ] as const) {
    const { digest } = await pushPayload({
      url: server.url,
      host: server.host,
      repository: "ocp/release",
      name,
      releaseTag: name,
      arches: [arch],
      components: [{ tag: "ovn-kubernetes", binary: `${name} ovn tests` }],
    });
    pinned.set(name, `${server.host}/ocp/release@${digest}`);
    releaseController.publish(stream, { name, repository: `${server.host}/ocp/release` });
  }
}, 120_000);
afterAll(async () => {
  await releaseController?.stop();
  await server?.stop();
  await dir?.remove();
});

let env: Awaited<ReturnType<typeof runMachinery>>;
beforeEach(async () => {
  env = await runMachinery(() => async (run) => run);
});
afterEach(async () => env.close());

/** Finishes every shard at once, with no results: what matters here is what came before. */
function executor(): ShardExecutor & { inputs: ExecuteShardInput[] } {
  const inputs: ExecuteShardInput[] = [];
  return {
    name: "local",
    inputs,
    arches: async () => [arch],
    execute: async (input) => {
      inputs.push(input);
      const resultsPath = join(dir.path, `${input.shard.runId}.jsonl`);
      await writeFile(resultsPath, "");
      return { status: "completed", resultsPath, records: 0 };
    },
  };
}

/** A run through the resolve and execute stages, with the real resolver and a recording cluster source. */
async function pipeline(record: RunRecord): Promise<{
  run: RunRecord;
  clusters: TestClusterProvider;
  shards: ExecuteShardInput[];
}> {
  const cacheDir = join(dir.path, `cache-${record.id}`);
  const exec = executor();
  const clusters = testClusterProvider({ kubeconfig: () => "" });
  await env.runs.store.create(record);
  const resolvePlan = createPayloadPlanResolver({
    registry: await createRegistry({ cacheDir }),
    releaseController: createReleaseController({ baseUrl: releaseController.url }),
    releases: {
      repositories: [`${server.host}/ocp/release`],
      streams: [{ name: "4.21", stream: "4.21.0-0.nightly" }],
    },
  });
  await processResolve(env.runs, { resolvePlan, executor: exec }, record.id);
  if ((await env.runs.store.get(record.id))?.state === "queued") {
    await processExecute(
      env.runs,
      {
        executor: exec,
        clusters: () => clusters,
        analyze: async () => ({
          conclusion: "neutral",
          output: { title: "analyzed", summary: "" },
          reportPath: "/report.html",
        }),
        dataDir: dir.path,
        progressIntervalMs: 10,
      },
      record.id,
    );
  }
  return { run: (await env.runs.store.get(record.id))!, clusters, shards: exec.inputs };
}

const asked = (clusters: TestClusterProvider) =>
  Object.fromEntries(clusters.requests.map((r) => [r.arm, r.payload]));

const streamRun = (options: Partial<RunRecord["options"]> = {}) =>
  runRecord({
    arch,
    options: { iterations: 1, baseline: "payload", ...options },
    source: { ...runRecord().source, tags: [], releaseStream: "4.22.0-0.nightly", clusters: 1 },
  });

describe("the resolve stage pins every payload of a run to a digest", () => {
  it("tests a release_stream repository's PR at the stream's latest payload, on clusters of its digest in both arms, and records which payload that was", async () => {
    const { run, clusters } = await pipeline(streamRun());
    expect(run.payloads).toEqual({
      pr: pinned.get(NIGHTLY),
      baseline: pinned.get(NIGHTLY),
      release: NIGHTLY,
      names: { pr: NIGHTLY, baseline: NIGHTLY },
    });
    expect(asked(clusters)).toEqual({ pr: pinned.get(NIGHTLY), baseline: pinned.get(NIGHTLY) });
    expect(run).toMatchObject({ state: "completed", conclusion: "neutral" });
  });

  it("asks for a periodic's clusters by the digest of the tag the release-controller answered", async () => {
    const latest = await createReleaseController({ baseUrl: releaseController.url }).latest(
      "4.22.0-0.nightly",
    );
    expect(latest.pullSpec).toBe(`${server.host}/ocp/release:${NIGHTLY}`);
    const periodic = periodicsConfigSchema.parse({
      periodics: [
        { name: "nightly", stream: "4.22.0-0.nightly", arches: [arch], cron: "0 * * * *", iterations: 1 },
      ],
    }).periodics[0]!;
    const record = periodicRunRecord({ periodic, arch, release: latest, now: new Date() });
    const { run, clusters } = await pipeline({ ...record, source: { ...record.source, clusters: 1 } });
    expect(asked(clusters)).toEqual({ pr: pinned.get(NIGHTLY) });
    expect(run.payloads).toMatchObject({ pr: pinned.get(NIGHTLY), release: NIGHTLY });
  });

  it("ends a run whose tag cannot be resolved with that reason, before any cluster is asked for", async () => {
    const missing = `${server.host}/ocp/release:4.22.0-0.nightly-never-published`;
    const { run, clusters } = await pipeline(
      runRecord({
        arch,
        options: { iterations: 1, baseline: "payload" },
        source: { ...streamRun().source, payload: missing },
      }),
    );
    expect(run).toMatchObject({ state: "completed", conclusion: "action_required" });
    expect(run.reason).toContain(`the payload ${missing} cannot be resolved to a digest`);
    expect(clusters.requests).toEqual([]);
  });

  it("starts an upgrade run's clusters at the digest of the release upgrade-from names, and upgrades each arm to its own", async () => {
    const { run, clusters, shards } = await pipeline(
      streamRun({ upgradeFrom: "4.21", includeDisruptive: true }),
    );
    expect(run.payloads?.upgradeFrom).toBe(pinned.get(OLDER));
    expect(asked(clusters)).toEqual({ pr: pinned.get(OLDER), baseline: pinned.get(OLDER) });
    expect(shards[0]!.shard.plan.arms.map((a) => [a.arm, a.upgradeTarget])).toEqual([
      ["pr", pinned.get(NIGHTLY)],
      ["baseline", pinned.get(NIGHTLY)],
    ]);
  });

  it("refuses an upgrade-from newer than the payload its clusters would upgrade to, and asks for no cluster", async () => {
    const newer = `${server.host}/ocp/release:${NIGHTLY}`;
    const onOlder = streamRun({ upgradeFrom: newer, includeDisruptive: true });
    const { run, clusters } = await pipeline({
      ...onOlder,
      source: { ...onOlder.source, releaseStream: "4.21.0-0.nightly" },
    });
    expect(run).toMatchObject({ state: "completed", conclusion: "action_required" });
    expect(run.reason).toBe(
      `upgrade-from=${newer} starts the clusters on ${NIGHTLY}, and the pr arm upgrades them to ${OLDER}: ${OLDER} is an older release than ${NIGHTLY}, and OpenShift does not roll a cluster back. Upgrade from an older release`,
    );
    expect(clusters.requests).toEqual([]);
  });

  it("refuses an upgrade-from outside the operator's releases, whoever set it, and asks for no cluster", async () => {
    for (const upgradeFrom of [
      `${server.host}/mallory/payload:1`,
      "4.22.0-0.nightly",
      "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64",
    ]) {
      const { run, clusters } = await pipeline(streamRun({ upgradeFrom, includeDisruptive: true }));
      expect(run).toMatchObject({ state: "completed", conclusion: "action_required" });
      expect(run.reason).toBe(
        `upgrade-from=${upgradeFrom} is not a release this bot's operator allows; it may be a release stream: 4.21 (4.21.0-0.nightly); or a release image (tag or sha256 digest) of ${server.host}/ocp/release`,
      );
      expect(clusters.requests).toEqual([]);
    }
  });
});
