import { readFile } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { processExecute } from "../../src/queue/process-execute.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import type { ExecuteShardInput, ShardExecutor } from "../../src/runs/shard-executor.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";
import { probeKubeconfig } from "../helpers/kubeconfig-probe-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { testClusterProvider } from "../helpers/test-cluster-provider.ts";
import { emptyResults } from "../helpers/empty-results.ts";

const arch = hostArch();
const FROM = "quay.io/openshift-release-dev/ocp-release:4.18.9-x86_64";
/** What the resolve stage pinned FROM to. */
const FROM_PINNED = `quay.io/openshift-release-dev/ocp-release@sha256:${"2".repeat(64)}`;
const RELEASED = `quay.io/openshift-release-dev/ocp-release@sha256:${"3".repeat(64)}`;
const PR_PAYLOAD = `quay.io/netstress/pr-release@sha256:${"4".repeat(64)}`;
let env: Awaited<ReturnType<typeof testRunDeps>>;
let dir: Awaited<ReturnType<typeof tempDir>>;
let api: FakeKubeApi;
let apiKubeconfig: string;

beforeAll(async () => {
  api = await startFakeKubeApi();
  apiKubeconfig = await readFile(api.kubeconfigPath, "utf8");
});
afterAll(() => api.stop());
beforeEach(async () => {
  env = await testRunDeps();
  dir = await tempDir();
});
afterEach(async () => {
  await env.close();
  await dir.remove();
});

const upgradeRun = (upgradeFrom?: string, pinnedFrom = FROM_PINNED): PrRun =>
  runRecord({
    arch,
    plan: {
      arch,
      arms: (["pr", "baseline"] as const).map((arm) => ({
        arm,
        components: [{ component: "netstress-network-tests", binary: "/unused" }],
      })),
    },
    payloads: {
      pr: PR_PAYLOAD,
      baseline: RELEASED,
      ...(upgradeFrom && pinnedFrom ? { upgradeFrom: pinnedFrom } : {}),
    },
    options: { iterations: 2, baseline: "payload", ...(upgradeFrom ? { upgradeFrom } : {}) },
    source: { ...runRecord().source, payload: RELEASED, clusters: 2 },
  });

async function execute(record: PrRun) {
  const clusters = testClusterProvider({
    kubeconfig: (id) => probeKubeconfig(id.replace("/", "-"), apiKubeconfig),
  });
  const inputs: ExecuteShardInput[] = [];
  const notes: string[][] = [];
  const executor: ShardExecutor = {
    name: "local",
    arches: async () => [arch],
    execute: async (input) => {
      inputs.push(input);
      return { status: "completed", resultsPath: await emptyResults(input.outDir), records: 0 };
    },
  };
  const analyze: AnalyzeRunResults = async (input) => {
    notes.push(input.notes ?? []);
    return { conclusion: "neutral", output: { title: "analyzed", summary: "" }, reportPath: "/r.html" };
  };
  await env.deps.store.create(record);
  await processExecute(
    env.deps,
    { executor, clusters: () => clusters, analyze, dataDir: dir.path },
    record.id,
  );
  return { clusters, inputs, notes, run: (await env.deps.store.get(record.id)) as PrRun };
}

describe("the execute stage of an upgrade run", () => {
  it("acquires both arms' clusters at upgradeFrom and gives each arm its own payload as the upgrade target", async () => {
    const { clusters, inputs, notes, run } = await execute(upgradeRun(FROM));
    expect(run).toMatchObject({ state: "completed", conclusion: "neutral" });
    expect(clusters.requests.map((r) => [r.arm, r.payload, r.count])).toEqual([
      ["pr", FROM_PINNED, 2],
      ["baseline", FROM_PINNED, 2],
    ]);
    expect(run.clusters!.every((c) => c.payload === FROM_PINNED && c.releasedAt)).toBe(true);
    const plan = inputs[0]!.shard.plan;
    expect(plan.arms.map((a) => [a.arm, a.upgradeTarget])).toEqual([
      ["pr", PR_PAYLOAD],
      ["baseline", RELEASED],
    ]);
    // The upgrade tests are [Disruptive].
    expect(plan.selection?.includeDisruptive).toBe(true);
    expect(notes[0]).toContain(
      `an upgrade run: both arms' clusters started at ${FROM} (${FROM_PINNED}); the PR arm's upgraded to the PR payload, the baseline's to the released one`,
    );
    const summaries = env.github.checkRunWrites().map((w) => JSON.stringify(w.body.output ?? ""));
    expect(summaries.some((s) => s.includes(`| upgrade run from | \`${FROM}\` |`))).toBe(true);
  });

  it("asks for no cluster when the upgrade's start was never pinned to a digest", async () => {
    const { clusters, run } = await execute(upgradeRun(FROM, ""));
    expect(run).toMatchObject({ state: "completed", conclusion: "failure" });
    expect(run.reason).toContain(`payload ${FROM} was not resolved to a digest`);
    expect(clusters.requests).toEqual([]);
  });

  it("leaves an ordinary run's clusters at each arm's payload, with no upgrade target", async () => {
    const { clusters, inputs, notes } = await execute(upgradeRun());
    expect(clusters.requests.map((r) => [r.arm, r.payload])).toEqual([
      ["pr", PR_PAYLOAD],
      ["baseline", RELEASED],
    ]);
    expect(inputs[0]!.shard.plan.arms.every((a) => a.upgradeTarget === undefined)).toBe(true);
    expect(notes[0]!.some((n) => n.includes("upgrade run"))).toBe(false);
  });
});
