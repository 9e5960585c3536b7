import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createKubeObjects } from "@netstress/core/kube/kube-objects.ts";
import { LABELS } from "@netstress/core/kube/netstress-labels.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { Arm, ResultRecord } from "@netstress/core/model/result-record.ts";
import type { FakeImage, KubeObject } from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { TESTS_CONTAINER } from "../../src/farm/build-iteration-job.ts";
import { jobSecretName } from "../../src/farm/build-job-secret.ts";
import { formatRecordLine, formatStreamTrailer } from "../../src/farm/record-stream.ts";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import type { ResolveRunPlan } from "../../src/runs/plan-resolver.ts";
import { botObjects, FARM_RUNNER_IMAGE, PR, RELEASED } from "../clusters/hive-fixture.ts";
import { runnerSigner } from "../farm/farm-fixture.ts";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload, OWNER, REPO } from "../helpers/github-payloads.ts";
import type { TestBot } from "../helpers/github-test-bot.ts";
import { startHiveBotBed, type HiveBotBed } from "../helpers/hive-bot-bed.ts";

const REGRESSED = "[sig-network] NodePort service should be reachable from the host network";
const TESTS = [
  REGRESSED,
  ...Array.from({ length: 5 }, (_, i) => `[sig-network] connectivity check ${i + 1} should succeed`),
];
const COMPONENT_IMAGE = "registry.test/ocp/ovn-kubernetes";
const BUILD = { pr: `sha256:${"e".repeat(64)}`, baseline: `sha256:${"f".repeat(64)}` } as const;
const FARM_NAMESPACE = "netstress";

/** ClusterVersion history as the cluster's API server holds it, newest first. */
type History = { state: string; image: string }[];

/**
 * The runner image, simulated in-process: it reads its pod's plan and, for its arm, the kubeconfig
 * mounted from the Job's Secret, asks that cluster's API server for its ClusterVersion and streams
 * (signed as the runner signs) a record per test naming the cluster and the payload the cluster
 * said it runs. REGRESSED fails on a cluster running the PR payload — the planted regression — and
 * every other test passes: no outcome depends on run ids or cluster names.
 */
function clusterReadingRunner(): NonNullable<FakeImage["simulate"]> {
  return async ({ args }) => {
    const arg = (flag: string) => args[args.indexOf(flag) + 1]!;
    const signed = await runnerSigner(args);
    const plan = JSON.parse(await readFile(arg("--plan"), "utf8")) as ExecutionPlan;
    const iteration = Number(arg("--first-iteration"));
    const records: ResultRecord[] = [];
    for (const { arm, components } of plan.arms) {
      const cluster = plan.clusters!.find((c) => c.arm === arm)!;
      const kubeconfig = join(arg("--kubeconfig-dir"), cluster.kubeconfig);
      const version = (await createKubeObjects({
        name: cluster.id,
        kubeconfig: { path: kubeconfig },
        timeoutMs: 10_000,
      }).get("clusterVersions", "version")) as { status: { history: History } };
      const runs = version.status.history.find((h) => h.state === "Completed")!.image;
      const server = /server: *(\S+)/.exec(await readFile(kubeconfig, "utf8"))![1]!;
      for (const { component, tests } of components)
        for (const name of tests ?? TESTS) {
          const failed = name === REGRESSED && runs === PR;
          records.push({
            name,
            lifecycle: "blocking",
            duration: 1,
            result: failed ? "failed" : "passed",
            output: JSON.stringify({ server, history: version.status.history }),
            arm,
            arch: plan.arch,
            iteration,
            attempt: 0,
            component,
            cluster: cluster.id,
            payload: runs,
          });
        }
    }
    const lines = [
      ...records.map((r, i) => formatRecordLine(i, r)),
      formatStreamTrailer(records.length, "completed"),
    ];
    return { stdout: signed(lines), exitCode: 0 };
  };
}

/** The farm's images: the simulated runner (its tests container idles) and both arms' component builds. */
function farmImages(): Record<string, FakeImage> {
  const runner = clusterReadingRunner();
  const copied: FakeImage = { simulate: async () => ({ stdout: "", exitCode: 0 }) };
  return {
    [FARM_RUNNER_IMAGE]: {
      simulate: (container) =>
        container.container === TESTS_CONTAINER
          ? Promise.resolve({ stdout: "", exitCode: 0 })
          : runner(container),
    },
    [`${COMPONENT_IMAGE}@${BUILD.pr}`]: copied,
    [`${COMPONENT_IMAGE}@${BUILD.baseline}`]: copied,
  };
}

/** Both arms' plan, each arm's binary in a component image by digest (a farm pulls them), on payloads of their own. */
const crossoverPlan: ResolveRunPlan = async ({ run }) => ({
  kind: "ready",
  payloads: { pr: PR, baseline: RELEASED },
  plan: {
    arch: run.arch,
    arms: (["pr", "baseline"] as const).map((arm) => ({
      arm,
      components: [
        {
          component: "ovn-kubernetes",
          binary: "/nonexistent",
          image: COMPONENT_IMAGE,
          digest: BUILD[arm],
          source: arm === "pr" ? ("override" as const) : ("released" as const),
        },
      ],
    })),
  },
});

/** A farm Job as it was created, with what its Secret held and its cluster under test said at that moment. */
interface CreatedJob {
  name: string;
  arms: string;
  /** The keys of the Job's Secret. */
  secretKeys: string[];
  /** The simulated Hive cluster its arm's kubeconfig reaches (by its API server's URL). */
  cluster: string | undefined;
  /** That cluster's ClusterVersion history when the Job was created. */
  history: History;
}

/** Every farm Job as it is created: the Secret is made before its Job, so it is there to read. */
function watchFarmJobs(bed: HiveBotBed): { jobs: CreatedJob[]; stop(): void } {
  const jobs: CreatedJob[] = [];
  const stop = bed.farmApi.store.subscribe((event) => {
    if (event.resource !== "jobs" || event.type !== "ADDED") return;
    const name = event.object.metadata.name;
    const arms = event.object.metadata.labels?.[LABELS.arms] ?? "";
    const secret = bed.farmApi.store.get("secrets", FARM_NAMESPACE, jobSecretName(name)) as
      (KubeObject & { data?: Record<string, string> }) | undefined;
    const kubeconfig = Buffer.from(secret?.data?.[arms] ?? "", "base64").toString();
    const server = /server: *(\S+)/.exec(kubeconfig)?.[1];
    const cluster = bed.hive.clusters().find((c) => c.url === server);
    const version = cluster?.api.store.get("clusterversions", "", "version") as
      { status?: { history?: History } } | undefined;
    jobs.push({
      name,
      arms,
      secretKeys: Object.keys(secret?.data ?? {}).sort(),
      cluster: cluster?.name,
      history: (version?.status?.history ?? []).map(({ state, image }) => ({ state, image })),
    });
  });
  return { jobs, stop };
}

const readRecords = async (path: string): Promise<ResultRecord[]> =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ResultRecord);

let redis: Redis;
let bed: HiveBotBed | undefined;
let t: TestBot | undefined;

beforeAll(() => {
  redis = new Redis(inject("redisUrl"));
});
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await bed?.stop();
  bed = undefined;
});
afterAll(async () => {
  await redis?.quit();
});

describe("a crossover by upgrade through the build-farm executor", () => {
  it("runs each half's Jobs against its own arm's clusters only, the PR half once its cluster's upgrade completed, finds the planted regression and leaves nothing on the farm", async () => {
    bed = await startHiveBotBed({
      installMs: 100,
      poolSize: 4,
      // An upgrade takes longer than dispatching a Job: a PR half that did not wait for its
      // clusters' upgrades would have its Jobs created while they are Partial.
      clusterFor: () => ({ upgradeMs: 1500 }),
      farmImages: farmImages(),
    });
    const watch = watchFarmJobs(bed);
    t = await bed.startBot({
      github: {
        members: ["alice"],
        config: [
          "mode: adaptive",
          'target: "0.02:0.52"',
          "budget: 300 iterations",
          "limits: { max_iterations: 300 }",
        ].join("\n"),
      },
      executor: "farm",
      // Each of its 100-odd Jobs reports progress: a check-run write per report would spend
      // GitHub's write budget (78 a minute) and hold back the run's own writes.
      progressIntervalMs: 1000,
      resolvePlan: crossoverPlan,
      analyze: createRunAnalyzer({
        history: createHistoryStore({ redis, prefix: `crossover-farm-${Date.now()}` }),
        log: pino({ level: "silent" }),
      }),
    });
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
    const check = await eventually(
      () => [...t!.github.latestCheckRuns().values()].find((c) => c.status === "completed"),
      300_000,
    );
    watch.stop();
    const output = check.output as { title: string; summary: string };
    const [run] = await t.store.listForPullRequest(OWNER.login, REPO, 7);
    expect(check.conclusion, `${output.title}\n${output.summary}\n${run?.reason ?? ""}`).toBe("failure");
    expect(output.title).toMatch(/^Regression in 1 test\(s\) — decided in \d+ batch\(es\)/);
    expect(output.summary).toMatch(/^\*\*Adaptive run \(crossover by upgrade\)\*\*/);
    const row = (name: string) =>
      output.summary.split("\n").find((line) => line.startsWith("| ") && line.includes(name.slice(15)));
    expect(row(REGRESSED)).toMatch(/\| regression \| decided regression after batch \d+ \|/);
    for (const name of TESTS.slice(1))
      expect(row(name)).toMatch(/\| clean \| decided clean after batch \d+ \|/);
    expect(run!.adaptive!.design).toBe("crossover by upgrade");
    const upgraded = run!.adaptive!.upgrades!.filter((u) => !u.failed).map((u) => u.id);
    expect(upgraded.length).toBeGreaterThan(0);

    // One arm per Job, its Secret holding its stream key and that arm's kubeconfig only.
    const { jobs } = watch;
    expect(new Set(jobs.map((j) => j.arms))).toEqual(new Set(["pr", "baseline"]));
    for (const job of jobs) {
      expect(job.secretKeys, job.name).toEqual([job.arms, "stream-key"].sort());
      expect(job.cluster, job.name).toBeDefined();
    }
    // A baseline half's pods reach clusters on the released payload that never moved; a PR half's
    // reach clusters whose upgrade to the PR payload had completed when the Job was created — ones
    // that ran a baseline half before — or, confirming the suspect, new ones on the PR payload.
    const ranBaseline = new Set<string>();
    const confirming = new Set<string>();
    for (const job of jobs) {
      if (job.arms === "baseline") {
        expect(job.history, job.name).toEqual([{ state: "Completed", image: RELEASED }]);
        ranBaseline.add(job.cluster!);
      } else if (job.history.length === 1) {
        expect(job.history, job.name).toEqual([{ state: "Completed", image: PR }]);
        expect(ranBaseline.has(job.cluster!), `${job.name} on ${job.cluster}`).toBe(false);
        confirming.add(job.cluster!);
      } else {
        expect(job.history[0], job.name).toEqual({ state: "Completed", image: PR });
        expect(ranBaseline.has(job.cluster!), `${job.name} on ${job.cluster}`).toBe(true);
      }
    }
    expect(confirming.size).toBeGreaterThan(0);

    // The records say the same, as the pods' own kubeconfigs showed it: each arm's payload, the
    // PR arm's on the upgraded clusters and the confirming ones only.
    const records = (await Promise.all(run!.results.map((r) => readRecords(r.resultsPath)))).flat();
    expect(records.length).toBeGreaterThan(0);
    const seen = (arm: Arm) => records.filter((r) => r.arm === arm);
    const confirmingIds = run!.clusters!.filter((c) => c.payload === PR).map((c) => c.id);
    for (const record of seen("baseline")) expect(record.payload).toBe(RELEASED);
    for (const record of seen("pr")) {
      expect(record.payload).toBe(PR);
      expect([...upgraded, ...confirmingIds]).toContain(record.cluster);
    }
    expect(run!.results.every((r) => r.armsIsolated)).toBe(true);

    // Nothing is left on the farm or the hub.
    const left = (resource: string) =>
      bed!.farmApi.store.list(resource, FARM_NAMESPACE, () => true).items.map((o) => o.metadata.name);
    await expect
      .poll(() => ["jobs", "pods", "secrets"].flatMap((r) => left(r).map((name) => `${r}/${name}`)), {
        timeout: 30_000,
      })
      .toEqual([]);
    await eventually(() => botObjects(bed!.hive).length === 0, 30_000);
  }, 360_000);
});
