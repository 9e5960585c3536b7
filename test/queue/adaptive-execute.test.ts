import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { processExecute } from "../../src/queue/process-execute.ts";
import type { AnalyzeRunResults } from "../../src/runs/analyze-port.ts";
import type { PrRun } from "../../src/runs/run-record.ts";
import { eventually } from "../helpers/github-api.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { testClusterProvider } from "../helpers/test-cluster-provider.ts";
import { weatherExecutor } from "../helpers/weather-executor.ts";

const PAYLOAD = `quay.io/openshift-release-dev/ocp-release@sha256:${"4".repeat(64)}`;
const PR_PAYLOAD = `registry.example/netstress/pr-payload@sha256:${"5".repeat(64)}`;
const REGRESSED = "[sig-network] NodePort service should be reachable from the host network";
const TESTS = [REGRESSED, ...Array.from({ length: 5 }, (_, i) => `[sig-network] check ${i + 1} should pass`)];

let env: Awaited<ReturnType<typeof testRunDeps>>;
let dir: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  env = await testRunDeps();
  dir = await tempDir();
});
afterEach(async () => {
  await env.close();
  await dir.remove();
});

const analyze: AnalyzeRunResults = async ({ resultsPaths, notes }) => ({
  conclusion: "success",
  output: { title: "analyzed", summary: [`${resultsPaths.length} result sets`, ...(notes ?? [])].join("\n") },
  reportPath: "/report.html",
});

/** An adaptive run of both arms on one payload (shared clusters), or of different ones (crossover). */
const adaptiveRun = (payloads?: { pr: string; baseline: string }, budgetIterations = 40): PrRun =>
  runRecord({
    ...(payloads ? { payloads } : {}),
    plan: {
      arch: "amd64",
      arms: (["pr", "baseline"] as const).map((arm) => ({
        arm,
        components: [{ component: "ovn-kubernetes", binary: "/nonexistent" }],
      })),
    },
    options: { iterations: 10, baseline: "payload" },
    source: {
      ...runRecord().source,
      payload: PAYLOAD,
      adaptive: { target: { from: 0.02, to: 0.32 }, budgetIterations },
    },
  });

describe("an adaptive run in the execute stage", () => {
  it("resumes after the bot stops mid-batch with the batch it was running, keeping the batches it finished", async () => {
    const record = adaptiveRun();
    await env.deps.store.create(record);
    const clusters = testClusterProvider({ kubeconfig: () => "apiVersion: v1\nkind: Config\n" });
    const first = { shards: 0, executions: 0 };
    const shutdown = new AbortController();
    const shards: string[] = [];
    const stage = (executor: ReturnType<typeof weatherExecutor>, signal?: AbortSignal) =>
      processExecute(
        env.deps,
        {
          executor,
          clusters: () => clusters,
          analyze,
          dataDir: dir.path,
          progressIntervalMs: 10,
          ...(signal ? { shutdown: signal } : {}),
        },
        record.id,
      );
    // The bot stops while its second batch runs.
    const stopping = weatherExecutor({
      tests: TESTS,
      regressed: REGRESSED,
      payload: PAYLOAD,
      executed: first,
      before: async ({ shard, signal }) => {
        shards.push(shard.id);
        if (shards.length < 2) return "run";
        shutdown.abort();
        return signal.aborted ? "cancelled" : "run";
      },
    });
    expect(await stage(stopping, shutdown.signal)).toBe("interrupted");
    const stopped = (await env.deps.store.get(record.id))!;
    expect(stopped.state).toBe("running");
    expect(stopped.adaptive!.batches.map((b) => b.shardId)).toEqual(shards);
    expect(stopped.results.map((r) => r.id)).toEqual([shards[0]]);
    expect(stopped.adaptive!.decision!.tests).toHaveLength(TESTS.length);

    const resumed: string[] = [];
    const second = { shards: 0, executions: 0 };
    const executor = weatherExecutor({
      tests: TESTS,
      regressed: REGRESSED,
      payload: PAYLOAD,
      executed: second,
      before: async ({ shard }) => {
        resumed.push(shard.id);
        return "run";
      },
    });
    expect(await stage(executor)).toBe("done");
    // The batch that was running runs again first; the finished one never does.
    expect(resumed[0]).toBe(shards[1]);
    expect(resumed).not.toContain(shards[0]);
    const done = (await env.deps.store.get(record.id))!;
    expect(done.state).toBe("completed");
    expect(done.results.map((r) => r.id)).toEqual(done.adaptive!.batches.map((b) => b.shardId));
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.decision).toBe("regression");
    expect(done.conclusion).toBe("failure");
    // What the stopped process held stays for the resuming one to adopt (this source never adopts:
    // start-up reconciliation gives them back); what the resumed one took it gave back.
    expect(clusters.held().sort()).toEqual(stopped.clusters!.map((c) => c.id).sort());
  }, 60_000);

  it("plans and decides each batch from its own records: a batch's results are never read again once a decision kept what the next ones need, after a restart too", async () => {
    const record = adaptiveRun();
    await env.deps.store.create(record);
    const clusters = testClusterProvider({ kubeconfig: () => "apiVersion: v1\nkind: Config\n" });
    const stage = (before: Parameters<typeof weatherExecutor>[0]["before"], shutdown?: AbortSignal) =>
      processExecute(
        env.deps,
        {
          executor: weatherExecutor({
            tests: TESTS,
            regressed: REGRESSED,
            payload: PAYLOAD,
            executed: { shards: 0, executions: 0 },
            before,
          }),
          clusters: () => clusters,
          analyze,
          dataDir: dir.path,
          progressIntervalMs: 10,
          ...(shutdown ? { shutdown } : {}),
        },
        record.id,
      );
    // Each batch's results are gone once the next batch starts: reading them again would fail the run.
    const ran: string[] = [];
    const forget = async () => {
      await Promise.all(ran.map((earlier) => rm(join(earlier, "results.jsonl"), { force: true })));
    };
    // The bot stops as its second batch starts, and the resumed run goes on without the first's results.
    const shutdown = new AbortController();
    const stopping = async ({ outDir }: { outDir: string }) => {
      if (ran.length === 0) {
        ran.push(outDir);
        return "run" as const;
      }
      shutdown.abort();
      return "cancelled" as const;
    };
    expect(await stage(stopping, shutdown.signal)).toBe("interrupted");
    await forget();
    const resumed = async ({ outDir }: { outDir: string }) => {
      await forget();
      ran.push(outDir);
      return "run" as const;
    };
    expect(await stage(resumed)).toBe("done");
    const done = (await env.deps.store.get(record.id))!;
    expect(done.reason ?? "").not.toMatch(/the run failed/);
    expect(ran.length).toBeGreaterThan(1);
    expect(done.adaptive!.batches).toHaveLength(ran.length);
    expect(done.adaptive!.decision!.stopped).not.toBeNull();
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.decision).toBe("regression");
  }, 60_000);
});

describe("an adaptive run whose arms' payloads differ, in the execute stage", () => {
  const crossover = async (
    movable: Parameters<typeof testClusterProvider>[0]["movable"],
    installMs?: number,
  ) => {
    // Each cluster gives one contrast, and costs an install and an upgrade: more budget than shared clusters.
    const record = adaptiveRun({ pr: PR_PAYLOAD, baseline: PAYLOAD }, 400);
    await env.deps.store.create(record);
    const clusters = testClusterProvider({
      kubeconfig: () => "apiVersion: v1\nkind: Config\n",
      movable,
      ...(installMs !== undefined ? { installMs } : {}),
    });
    const executed = { shards: 0, executions: 0 };
    const arms: string[][] = [];
    const executor = weatherExecutor({
      tests: TESTS,
      regressed: REGRESSED,
      payload: PAYLOAD,
      executed,
      before: async ({ clusters: given }) => {
        arms.push(
          Object.entries(given ?? {}).flatMap(([arm, leases]) =>
            leases.map((l) => `${arm} ${l.cluster.payload}`),
          ),
        );
        return "run";
      },
    });
    const stage = await processExecute(
      env.deps,
      { executor, clusters: () => clusters, analyze, dataDir: dir.path, progressIntervalMs: 10 },
      record.id,
    );
    return { stage, clusters, arms, executed, done: (await env.deps.store.get(record.id))! };
  };

  it("runs a crossover by upgrade: new clusters on the baseline payload, each upgraded to the PR payload for its PR half, and finds the regression", async () => {
    const { stage, clusters, arms, done } = await crossover({});
    expect(stage).toBe("done");
    expect(done.output!.summary).not.toMatch(/fixed run/);
    expect(done.adaptive!.design).toBe("crossover by upgrade");
    expect(done.conclusion).toBe("failure");
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.decision).toBe("regression");
    // Every cluster was asked for on the baseline payload (its lease accepting the PR payload too),
    // but those that confirmed the suspect, new on the PR payload; only clusters that ran the
    // baseline arm were upgraded, each once, to the PR payload.
    expect(new Set(clusters.requests.map((r) => `${r.arm} ${r.payload} ${r.upgradeTarget}`))).toEqual(
      new Set([`pr ${PAYLOAD} ${PR_PAYLOAD}`, `pr ${PR_PAYLOAD} undefined`]),
    );
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.reason).toMatch(
      /confirmed on \d+ pair\(s\) of new clusters never upgraded/,
    );
    expect(clusters.upgrades.length).toBeGreaterThan(0);
    expect(clusters.upgrades.every((u) => u.payload === PR_PAYLOAD)).toBe(true);
    expect(new Set(clusters.upgrades.map((u) => u.id)).size).toBe(clusters.upgrades.length);
    expect(done.adaptive!.upgrades!.map((u) => u.id).sort()).toEqual(
      clusters.upgrades.map((u) => u.id).sort(),
    );
    // One arm per shard: the baseline arm on clusters as acquired, the PR arm on upgraded ones.
    for (const shard of arms) expect(new Set(shard).size).toBe(1);
    expect(arms.flat()).toContain(`pr ${PR_PAYLOAD}`);
    expect(arms.flat()).toContain(`baseline ${PAYLOAD}`);
    expect(clusters.held()).toEqual([]);
    expect(done.output!.summary).toMatch(/\*\*Adaptive run \(crossover by upgrade\)\*\*/);
    expect(done.output!.summary).toMatch(/Upgraded to the PR payload: \d+ cluster/);
  }, 60_000);

  it("says which payload installs: the released one for clusters it will upgrade, the PR's for those that confirm a suspect", async () => {
    const { stage, done } = await crossover({}, 150);
    expect(stage).toBe("done");
    const installing = env.github
      .checkRunWrites()
      .flatMap((w) => (w.body.output as { summary?: string } | undefined)?.summary?.split("\n") ?? [])
      .filter((line) => /installing \d+ clusters? of/.test(line));
    expect(installing.some((line) => /of the released payload/.test(line))).toBe(true);
    // Only the clusters that confirm a suspect start on the PR payload.
    expect(done.clusters!.some((c) => c.payload === PR_PAYLOAD)).toBe(true);
    expect(installing.some((line) => /of the PR payload/.test(line))).toBe(true);
    expect(done.provisioning).toBeUndefined();
  }, 60_000);

  it("gives back a cluster whose upgrade fails, says why on the check run, and concludes with the others", async () => {
    let failures = 0;
    const { stage, clusters, done } = await crossover({
      fail: () => (failures++ === 0 ? "the upgrade did not complete in 1 s" : undefined),
    });
    expect(stage).toBe("done");
    expect(done.state).toBe("completed");
    const failed = done.adaptive!.upgrades!.filter((u) => u.failed);
    expect(failed).toEqual([expect.objectContaining({ failed: "the upgrade did not complete in 1 s" })]);
    expect(done.clusters!.find((c) => c.id === failed[0]!.id)!.releasedAt).toBeDefined();
    // It was never asked to move again.
    expect(clusters.upgrades.filter((u) => u.id === failed[0]!.id)).toHaveLength(1);
    expect(done.output!.summary).toContain(
      `${failed[0]!.id} not upgraded: the upgrade did not complete in 1 s`,
    );
    expect(["failure", "neutral"]).toContain(done.conclusion);
  }, 60_000);

  it("runs as a fixed run, and says why, when no cluster source may move its clusters", async () => {
    const { done, clusters } = await crossover(undefined);
    expect(done.adaptive).toBeUndefined();
    expect(clusters.upgrades).toEqual([]);
    expect(done.output!.summary).toMatch(
      /mode: adaptive ran as a fixed run of 10 iterations: the arms run different payloads/,
    );
  }, 60_000);

  /** The outputs of the check-run writes from the `from`th on, in the order GitHub took them. */
  const checkRunOutputs = (from = 0) =>
    env.github
      .checkRunWrites()
      .slice(from)
      .map((w) => w.body.output as { title: string; summary: string });
  /** The line a batch's upgrades show while they happen. */
  const upgradingLine = (clusters: number, batch: number) =>
    new RegExp(
      `upgrading ${clusters} cluster\\(s\\) to the PR payload since \\d\\d:\\d\\d UTC \\(batch ${batch}\\)`,
    );

  it("shows on the check run which clusters its batch upgrades to the PR payload while they upgrade, how many are done, and no longer once its PR half runs", async () => {
    const { stage, done } = await crossover({ upgradeMs: 200 });
    expect(stage).toBe("done");
    const batch = done.adaptive!.batches.findIndex((b) => b.halves?.some((h) => h.upgrade));
    const upgraded = done.adaptive!.batches[batch]!.halves!.find((h) => h.arm === "pr")!.upgrade!;
    const line = upgradingLine(upgraded.length, batch + 1);
    const outputs = checkRunOutputs();
    const first = outputs.findIndex((o) => line.test(o.title));
    expect(first).toBeGreaterThanOrEqual(0);
    expect(outputs[first]!.summary).toContain(PR_PAYLOAD);
    for (const id of upgraded) expect(outputs[first]!.summary).toContain(`\`${id}\``);
    // As each finishes, the count of those done; the last before the PR half runs counts them all.
    const last = outputs.findLastIndex((o) => line.test(o.title));
    expect(outputs.slice(first, last + 1).map((o) => o.summary)).toContainEqual(
      expect.stringMatching(/: 1 done/),
    );
    expect(outputs[last]!.summary).toContain(`: ${upgraded.length} done`);
    // Then the check run shows the batch running, and never its upgrades again; the conclusion none.
    expect(outputs[last + 1]!.title).toMatch(/^Running — /);
    for (const output of outputs.slice(last + 1)) expect(output.summary).not.toMatch(line);
    expect(outputs.at(-1)!.summary).not.toMatch(/upgrading \d+ cluster/);
  }, 60_000);

  it("shows a batch's upgrades again, not the stopped process's, when the run resumes mid-upgrade", async () => {
    const record = adaptiveRun({ pr: PR_PAYLOAD, baseline: PAYLOAD }, 400);
    await env.deps.store.create(record);
    // Upgrades take long until the bot has stopped: it stops while they are under way.
    const movable = { upgradeMs: 600_000 };
    const clusters = testClusterProvider({ kubeconfig: () => "apiVersion: v1\nkind: Config\n", movable });
    const shutdown = new AbortController();
    const stage = (signal?: AbortSignal) =>
      processExecute(
        env.deps,
        {
          executor: weatherExecutor({
            tests: TESTS,
            regressed: REGRESSED,
            payload: PAYLOAD,
            executed: { shards: 0, executions: 0 },
          }),
          clusters: () => clusters,
          analyze,
          dataDir: dir.path,
          progressIntervalMs: 10,
          ...(signal ? { shutdown: signal } : {}),
        },
        record.id,
      );
    const stopping = stage(shutdown.signal);
    const upgrading = /upgrading (\d+) cluster\(s\) to the PR payload/;
    await eventually(() => checkRunOutputs().some((o) => upgrading.test(o.title)), 30_000);
    shutdown.abort();
    expect(await stopping).toBe("interrupted");
    const before = env.github.checkRunWrites().length;

    movable.upgradeMs = 0;
    expect(await stage()).toBe("done");
    const resumed = checkRunOutputs(before);
    // The resumed process says it runs again, then which upgrades it waits for, as it sees them.
    expect(resumed[0]!.title).not.toMatch(upgrading);
    const again = resumed.findIndex((o) => upgrading.test(o.title));
    expect(again).toBeGreaterThan(0);
    expect(resumed[again]!.summary).not.toMatch(/: \d+ done/);
    expect(resumed.at(-1)!.summary).not.toMatch(/upgrading \d+ cluster/);
  }, 60_000);

  it("resumes after the bot stops mid-batch: only the unfinished half runs again, on the clusters planned for it, taken back by their numbers", async () => {
    const record = adaptiveRun({ pr: PR_PAYLOAD, baseline: PAYLOAD }, 400);
    await env.deps.store.create(record);
    const clusters = testClusterProvider({ kubeconfig: () => "apiVersion: v1\nkind: Config\n", movable: {} });
    const shutdown = new AbortController();
    const shards: { id: string; arm: string; clusters: string[] }[] = [];
    const executor = (stopAtPr: boolean) =>
      weatherExecutor({
        tests: TESTS,
        regressed: REGRESSED,
        payload: PAYLOAD,
        executed: { shards: 0, executions: 0 },
        before: async ({ shard, clusters: given }) => {
          const arm = shard.arms[0]!;
          shards.push({ id: shard.id, arm, clusters: (given?.[arm] ?? []).map((l) => l.cluster.id) });
          if (!stopAtPr || arm !== "pr") return "run";
          // The bot stops while the first PR half runs.
          shutdown.abort();
          return "cancelled";
        },
      });
    const stage = (stopAtPr: boolean) =>
      processExecute(
        env.deps,
        {
          executor: executor(stopAtPr),
          clusters: () => clusters,
          analyze,
          dataDir: dir.path,
          progressIntervalMs: 10,
          ...(stopAtPr ? { shutdown: shutdown.signal } : {}),
        },
        record.id,
      );
    expect(await stage(true)).toBe("interrupted");
    const stopped = (await env.deps.store.get(record.id))!;
    const batch = stopped.adaptive!.batches[1]!;
    const prHalf = batch.halves!.find((h) => h.arm === "pr")!;
    // The batch and its upgrades were saved before they ran; its PR half did not finish.
    expect(prHalf.upgrade!.length).toBeGreaterThan(0);
    expect(stopped.results.map((r) => r.id)).not.toContain(prHalf.shardId);
    const finishedBefore = stopped.results.map((r) => r.id);
    const ranBefore = shards.length;

    expect(await stage(false)).toBe("done");
    const resumed = shards.slice(ranBefore);
    // The unfinished half runs first, on the clusters the batch planned to upgrade; no finished shard runs again.
    expect(resumed[0]).toMatchObject({ id: prHalf.shardId, arm: "pr" });
    expect(resumed[0]!.clusters.toSorted()).toEqual(prHalf.upgrade!.toSorted());
    for (const shard of resumed) expect(finishedBefore).not.toContain(shard.id);
    const done = (await env.deps.store.get(record.id))!;
    expect(done.state).toBe("completed");
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.decision).toBe("regression");
    expect(clusters.held()).toEqual([]);
  }, 60_000);

  it("counts both halves of a batch in the check run's progress while they run at once", async () => {
    const record = adaptiveRun({ pr: PR_PAYLOAD, baseline: PAYLOAD }, 400);
    await env.deps.store.create(record);
    const clusters = testClusterProvider({ kubeconfig: () => "apiVersion: v1\nkind: Config\n", movable: {} });
    // Each half reports its executions as a build farm's do; the halves of the first batch that runs
    // both wait until the test has read the check run.
    const reported = { pr: { done: 30, total: 60, failed: 7 }, baseline: { done: 20, total: 60, failed: 1 } };
    let read!: () => void;
    const checked = new Promise<void>((resolve) => (read = resolve));
    const executor = weatherExecutor({
      tests: TESTS,
      regressed: REGRESSED,
      payload: PAYLOAD,
      executed: { shards: 0, executions: 0 },
      before: async ({ shard, onProgress }) => {
        const batch = (await env.deps.store.get(record.id))!.adaptive!.batches.at(-1)!;
        if (batch.halves?.length !== 2) return "run";
        onProgress?.(reported[shard.arms[0]!]);
        await checked;
        return "run";
      },
    });
    const stage = processExecute(
      env.deps,
      { executor, clusters: () => clusters, analyze, dataDir: dir.path, progressIntervalMs: 10 },
      record.id,
    );
    const title = () =>
      String((env.github.latestCheckRuns().get(1000)?.output as { title?: unknown })?.title);
    const shown = await eventually(() => title().includes("50/120 executions") && title(), 5_000).catch(
      title,
    );
    read();
    expect(await stage).toBe("done");
    // Batch 3 is the first with both: the suspect's confirmation pair, one new cluster on each payload.
    expect(shown).toMatch(/^Running — batch 3, 1 undecided test\(s\): 50\/120 executions, 8 failed/);
  }, 60_000);
});

describe("an adaptive run with its release stream's history of the baseline payload, in the execute stage", () => {
  const STREAM = "4.19.0-0.nightly";
  const released = (n: number) => `quay.io/openshift-release-dev/ocp-release@sha256:${String(n).repeat(64)}`;
  const DAY = 86_400_000;
  /** Runs of the stream pooled per payload, oldest first: every test failing 1 in 40. */
  const recordStream = async (
    history: ReturnType<typeof createHistoryStore>,
    payloads: string[],
    from: number,
  ) => {
    for (const [i, pullspec] of payloads.entries())
      await history.record({
        stream: STREAM,
        arch: "amd64",
        runId: `periodic-${pullspec}`,
        at: new Date(Date.now() - (from - i) * DAY),
        payload: { pullspec, release: `${STREAM}-2026-12-0${i + 1}-000000` },
        tests: TESTS.map((name) => ({ name, runs: 40, passes: 39 })),
      });
  };
  const streamRun = (payloads?: { pr: string; baseline: string }) => {
    const run = adaptiveRun(payloads, 400);
    return { ...run, source: { ...run.source, releaseStream: STREAM } };
  };
  const stageOf = (
    record: PrRun,
    clusters: ReturnType<typeof testClusterProvider>,
    history: ReturnType<typeof createHistoryStore> | undefined,
    before?: Parameters<typeof weatherExecutor>[0]["before"],
    shutdown?: AbortSignal,
  ) =>
    processExecute(
      env.deps,
      {
        executor: weatherExecutor({
          tests: TESTS,
          regressed: REGRESSED,
          payload: PAYLOAD,
          executed: { shards: 0, executions: 0 },
          ...(before ? { before } : {}),
        }),
        clusters: () => clusters,
        ...(history ? { history } : {}),
        analyze,
        dataDir: dir.path,
        progressIntervalMs: 10,
        ...(shutdown ? { shutdown } : {}),
      },
      record.id,
    );
  const newClusters = (run: Pick<PrRun, "adaptive">, arm: "pr" | "baseline") =>
    run
      .adaptive!.batches.flatMap((b) => b.halves ?? [])
      .filter((h) => h.arm === arm)
      .reduce((sum, h) => sum + h.clusters - (h.upgrade?.length ?? 0), 0);
  const kubeconfig = () => "apiVersion: v1\nkind: Config\n";

  it("lets the history stand in for the baseline arm: new clusters on the PR payload against it, fewer baseline installs, and the check run says so", async () => {
    const history = createHistoryStore({ redis: env.redis, prefix: env.prefix });
    // Two released payloads before the baseline one, and one after it that is not its weather.
    await recordStream(history, [released(1), released(2), PAYLOAD, released(3)], 4);

    const without = streamRun({ pr: PR_PAYLOAD, baseline: PAYLOAD });
    await env.deps.store.create(without);
    expect(await stageOf(without, testClusterProvider({ kubeconfig, movable: {} }), undefined)).toBe("done");
    const plain = (await env.deps.store.get(without.id))!;

    const record = streamRun({ pr: PR_PAYLOAD, baseline: PAYLOAD });
    await env.deps.store.create(record);
    const clusters = testClusterProvider({ kubeconfig, movable: {} });
    expect(await stageOf(record, clusters, history)).toBe("done");
    const done = (await env.deps.store.get(record.id))!;

    expect(done.output!.summary).toContain(
      "history: 3 of 3 history payload(s) stood in for the baseline arm",
    );
    expect(done.adaptive!.history!.payloads.map((p) => p.payload)).toEqual([
      released(1),
      released(2),
      PAYLOAD,
    ]);
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.decision).toBe("regression");
    // Three clusters started on the PR payload alone against the history, never moved; any later
    // ones on the PR payload confirm a suspect, each beside a new one on the baseline payload.
    expect(
      clusters.requests.filter((r) => r.payload === PR_PAYLOAD && !r.upgradeTarget).length,
    ).toBeGreaterThan(0);
    expect(
      newClusters({ adaptive: { ...done.adaptive!, batches: done.adaptive!.batches.slice(0, 1) } }, "pr"),
    ).toBe(3);
    for (const batch of done.adaptive!.batches.slice(1)) {
      const started = (arm: "pr" | "baseline") =>
        newClusters({ adaptive: { ...done.adaptive!, batches: [batch] } }, arm);
      expect(started("pr")).toBeLessThanOrEqual(started("baseline"));
    }
    // Its first batch installs no baseline cluster where the run without the history installs four.
    const firstHalves = (run: Pick<PrRun, "adaptive">) =>
      run.adaptive!.batches[0]!.halves!.map((h) => `${h.arm} ${h.clusters - (h.upgrade?.length ?? 0)}`);
    expect(firstHalves(done)).toEqual(["pr 3"]);
    expect(firstHalves(plain)).toEqual(["baseline 4"]);
    expect(plain.output!.summary).not.toContain("history:");
    expect(clusters.held()).toEqual([]);
  }, 240_000);

  it("a resumed run decides with the history saved with its first batch, though the store changed meanwhile", async () => {
    const history = createHistoryStore({ redis: env.redis, prefix: env.prefix });
    await recordStream(history, [released(1), released(2), PAYLOAD], 4);
    const record = streamRun({ pr: PR_PAYLOAD, baseline: PAYLOAD });
    await env.deps.store.create(record);
    const clusters = testClusterProvider({ kubeconfig, movable: {} });
    const shutdown = new AbortController();
    // The bot stops while the first batch (the PR half against the history, on new clusters) runs.
    const stopping: Parameters<typeof weatherExecutor>[0]["before"] = async () => {
      shutdown.abort();
      return "cancelled";
    };
    expect(await stageOf(record, clusters, history, stopping, shutdown.signal)).toBe("interrupted");
    const stopped = (await env.deps.store.get(record.id))!;
    expect(stopped.adaptive!.history?.payloads).toHaveLength(3);

    // Meanwhile another released payload before the baseline joins the stream's history.
    await recordStream(history, [released(6)], 10);
    expect(await history.readPayloadHistory({ stream: STREAM, arch: "amd64" })).toHaveLength(4);

    expect(await stageOf(record, clusters, history)).toBe("done");
    const done = (await env.deps.store.get(record.id))!;
    expect(done.output!.summary).toContain(
      "history: 3 of 3 history payload(s) stood in for the baseline arm",
    );
    expect(done.adaptive!.history).toEqual(stopped.adaptive!.history);
    // The interrupted half ran again, on the clusters it started on the PR payload, taken back by their numbers.
    const first = stopped.adaptive!.batches[0]!.halves![0]!;
    expect(done.results.map((r) => r.id)).toContain(first.shardId);
    expect(done.adaptive!.decision!.tests.find((t) => t.name === REGRESSED)!.decision).toBe("regression");
  }, 120_000);

  it("a shared-cluster run ignores the history", async () => {
    const history = createHistoryStore({ redis: env.redis, prefix: env.prefix });
    await recordStream(history, [released(1), PAYLOAD], 3);
    const record = streamRun();
    await env.deps.store.create(record);
    expect(await stageOf(record, testClusterProvider({ kubeconfig }), history)).toBe("done");
    const done = (await env.deps.store.get(record.id))!;
    expect(done.adaptive!.design).toBe("shared clusters");
    expect(done.adaptive!.history).toBeUndefined();
    expect(done.output!.summary).not.toContain("history:");
  }, 60_000);
});
